"""Which parameters of a study were fitted, and on which published points."""

from __future__ import annotations

from collections.abc import Mapping

from storagelab.provenance import Param


def fits_of(*params: Mapping[str, Param]) -> dict[str, tuple[str, ...]]:
    """Per fitted parameter (name as declared, e.g. ``"oltp: ios_per_order"``), the ``datasets/`` row
    ids it was fitted on, from the preset and workload parameter sets given."""
    out: dict[str, tuple[str, ...]] = {}
    for ps in params:
        items = ps.declared().items() if hasattr(ps, "declared") else ps.items()
        for name, p in items:
            if p.origin == "fit":
                out[name] = tuple(dict.fromkeys(out.get(name, ()) + p.fitted_on))
    return out
