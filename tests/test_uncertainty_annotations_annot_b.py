"""Issue 68 item 1 for the NexGen, ILIO (EqualLogic) and VPLEX (XtremIO) studies: every assumption and fit
their presets and workloads are built from carries a distribution (a fit also a prior), and a draw at
each end of every distribution builds the preset (the ends are values the parameter accepts)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest

from storagelab.architectures.topology import Topology
from storagelab.provenance import Param, parameter_draw
from storagelab.studies.ilio import preset as ilio
from storagelab.studies.nexgen import preset as nexgen
from storagelab.studies.vplex import preset as vplex
from storagelab.uncertainty import Choice

#: Every preset of the three studies, and the variants whose parameters only some builds read.
BUILDS: dict[str, Callable[..., Topology]] = {
    **nexgen.PRESETS,
    "NexGen N5-150, QoS, ioTurbine, destage": lambda **o: nexgen.nexgen(
        qos=1, host_cache=1, flash_destage=1, **o
    ),
    **ilio.PRESETS,
    **vplex.PRESETS,
}


def _ends(p: Param) -> list[float | str]:
    """Every value a draw may take at the ends of ``p``'s distributions (a Choice's every value)."""
    out: list[float | str] = []
    for dist in (p.uncertainty, p.prior):
        if dist is None:
            continue
        out += list(dist.values) if isinstance(dist, Choice) else list(dist.bounds)
    return out


def _missing(params: Mapping[str, Param]) -> list[str]:
    """The assumptions without an uncertainty and the fits without an uncertainty or a prior."""
    return [
        f"{k} ({p.origin})"
        for k, p in params.items()
        if (p.origin in ("assumption", "fit") and p.uncertainty is None)
        or (p.origin == "fit" and p.prior is None)
    ]


@pytest.mark.parametrize("name", list(BUILDS))
def test_every_preset_assumption_and_fit_has_a_distribution(name: str) -> None:
    assert _missing(BUILDS[name]().params.declared()) == []


@pytest.mark.parametrize("name", list(BUILDS))
def test_a_draw_at_each_end_builds_the_preset(name: str) -> None:
    topo = BUILDS[name]()
    preset, declared = topo.params.preset, topo.params.declared()
    drawn = 0
    for key, p in declared.items():
        for end in _ends(p):
            with parameter_draw({(preset, key): end}):
                built = BUILDS[name]()
            assert built.params.declared()[key].value == end, (key, end)
            drawn += 1
    assert drawn > 0


def test_a_draw_outside_the_support_is_refused() -> None:
    """The check above can fail: a value outside a parameter's distribution is refused."""
    with parameter_draw({("EqualLogic PS6100E", "iscsi_latency"): 0.9}), pytest.raises(ValueError):
        ilio.equallogic()
