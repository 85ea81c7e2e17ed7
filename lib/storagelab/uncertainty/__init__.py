"""What a parameter's value may be, and what that makes a prediction (issue 68).

- :mod:`~storagelab.uncertainty.distributions`: the distribution a parameter's value is drawn from
  (:class:`Uniform`, :class:`LogUniform`, :class:`Triangular`, :class:`Choice`), set on a
  :class:`~storagelab.provenance.Param` as its ``uncertainty``;
- :mod:`~storagelab.uncertainty.design`: a scrambled Sobol' design drawing a scenario's uncertain
  parameters (the draws are applied with :func:`storagelab.provenance.parameter_draw`), or a Morris design;
- :mod:`~storagelab.uncertainty.sensitivity`: which parameters decide an output, by SALib.

Only the distributions are imported here: :mod:`storagelab.provenance` uses them, and the design and the
sensitivity analysis bring in scipy and SALib, which a preset does not need.

How a study uses this:

1. annotate: give an uncertain parameter its distribution, ``Param(4.0, "ms", "assumption", "...; the
   evidence allows 2-8 ms because ...", uncertainty=LogUniform(2.0, 8.0))`` (the bounds are in the Param's
   unit; ``source`` says why those bounds);
2. discover: run the scenario once inside :func:`storagelab.provenance.recording_uncertain`, which collects
   ``{(preset, parameter): Param}`` for every uncertain parameter the scenario's presets read;
3. draw: :func:`storagelab.uncertainty.design.sobol_design` on what was recorded gives ``n`` draws;
4. run: run the scenario once per draw inside :func:`storagelab.provenance.parameter_draw` (with common
   random numbers: the same simulation seed for every draw);
5. summarise: the quantiles of an output over the draws are its predictive interval, and
   :func:`storagelab.uncertainty.sensitivity.sensitivity` on the design and the outputs names the parameters
   that decide it.
"""

from __future__ import annotations

from storagelab.uncertainty.distributions import (
    DISTRIBUTIONS,
    Choice,
    Distribution,
    LogUniform,
    Triangular,
    Uniform,
)

__all__ = ["DISTRIBUTIONS", "Choice", "Distribution", "LogUniform", "Triangular", "Uniform", "unannotated"]


def unannotated(params: object) -> list[str]:
    """The parameters of ``params`` (a preset's :class:`~storagelab.architectures.parameters.ParamSet`,
    whose declared values are read, or a mapping of names to :class:`~storagelab.provenance.Param`) that
    issue 68 requires a distribution of and that lack one: an ``assumption`` or a ``fit`` without an
    ``uncertainty``, and a ``fit`` without a ``prior`` (its range without its rows). Each as ``"name:
    what is missing"``."""
    items = params.declared() if hasattr(params, "declared") else params  # type: ignore[union-attr]
    out = []
    for name, p in items.items():  # type: ignore[union-attr]
        if p.origin in ("assumption", "fit") and p.uncertainty is None:
            out.append(f"{name}: an {p.origin} without an uncertainty")
        if p.origin == "fit" and p.prior is None:
            out.append(f"{name}: a fit without a prior (its range without the rows it was fitted on)")
    return out
