"""Which uncertain parameters decide a scenario's output, by SALib (issue 68: "what to measure next").

Which method is affordable. A scenario's simulation takes seconds, and the uncertainty analysis can give
each scenario about 20-60 runs; with ``k`` uncertain parameters:

- Sobol' indices by Saltelli's estimator (first and total order) need ``N (2k + 2)`` runs with ``N`` a power
  of two of at least 16 or so: 288 runs for ``k = 8``. Not affordable.
- Morris screening (elementary effects, ``mu*``) needs ``r (k + 1)`` runs, about 4-10 trajectories: 36 runs
  for ``k = 8``, ``r = 4``. Affordable, but its one-at-a-time points sit on a grid of a few quantiles, so they
  are no sample for the predictive intervals: its runs come on top of the propagation's.
- First-order Sobol' indices by RBD-FAST (random balance designs; Tarantola et al. 2006, with the bias
  correction of Tissot and Prieur 2012) are estimated from any sample that fills the cube, so they reuse
  the propagation's own Sobol' design: no run beyond the 32 or 64 that give the intervals. They miss
  interactions (first order only) and are rough at ``n = 32``: measured on ``y = 10 x1 + x2`` with two more
  inputs that do nothing (4 uniform inputs, 30 seeds of the design, 2 harmonics), x1's index is 0.973
  (sd 0.004; truth 0.990) and x1 ranks first at every seed, but an input with no effect scatters with sd
  0.13-0.23 at ``n = 32`` (0.01-0.16 at ``n = 64``). So a claim's first driver is found; an index below
  about 0.3 at ``n = 32`` is not told from zero (SALib's bootstrap gives each index's confidence).

So the default is RBD-FAST on the propagation's :func:`~storagelab.uncertainty.design.sobol_design`; a
:func:`~storagelab.uncertainty.design.morris_design` is analysed by Morris, for screening a scenario with
more parameters than its propagation sample can rank.

Inputs are the design's quantiles ``u``, not the parameter values: a first-order index does not change under
a one-to-one transform of its input, and a Choice's value depends on ``u`` alone, so indices on ``u`` are the
indices on the parameters, names included.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from storagelab.uncertainty.design import Design, Key


@dataclass(frozen=True)
class Sensitivity:
    """Each parameter's index for one output: ``method`` is ``"rbd_fast"`` (``index`` is the first-order
    Sobol' index, the share of the output's variance the parameter explains alone, in [0, 1] up to the
    estimator's error) or ``"morris"`` (``index`` is ``mu*``, the mean absolute elementary effect: the output's change per unit
    change of the parameter's quantile, in the output's unit). ``confidence`` is the half-width of each
    index's 95 % bootstrap interval."""

    method: str
    index: dict[Key, float]
    confidence: dict[Key, float]

    def ranked(self) -> list[tuple[Key, float]]:
        """The parameters from the most to the least influential, with their index."""
        return sorted(self.index.items(), key=lambda kv: (-kv[1], kv[0]))


def sensitivity(
    design: Design, outputs: Sequence[float], seed: int = 0, harmonics: int | None = None
) -> Sensitivity:
    """The parameters' indices for ``outputs`` (one finite value per draw of ``design``, in its order).

    A Sobol' design is analysed by RBD-FAST with ``harmonics`` (``M``) Fourier harmonics, by default
    ``min(10, max(2, n // 32))``: two harmonics see an effect that is not monotone (one misses ``(x - 0.5)
    ** 2`` altogether), and more than ``n / 16`` make the bias correction ``2M / n`` and the scatter large
    (with 4 at ``n = 32`` an input with no effect scatters with sd 0.3). A Morris design is analysed by
    Morris. ``seed`` seeds the bootstrap of the confidence."""
    y = np.asarray(outputs, dtype=float)
    if y.shape != (len(design),):
        raise ValueError(f"{len(design)} draws but {y.size} outputs")
    if not np.isfinite(y).all():
        raise ValueError("an output is not finite: a failed run is reported, not analysed")
    if not design.keys:
        return Sensitivity("none", {}, {})
    problem = {
        "num_vars": len(design.keys),
        "names": [f"{p}.{n}" for p, n in design.keys],
        "bounds": [[0.0, 1.0]] * len(design.keys),
    }
    if design.kind == "sobol":
        from SALib.analyze import rbd_fast

        m = harmonics if harmonics is not None else min(10, max(2, len(design) // 32))
        if not 1 <= m < len(design) / 4:
            raise ValueError(f"RBD-FAST with {m} harmonics needs more than {4 * m} draws, got {len(design)}")
        # A bootstrap resample of an output that takes few values can be constant: SALib then divides 0 by
        # 0 for that resample (a NaN in the confidence only, never in the index), and would warn each time.
        with np.errstate(invalid="ignore", divide="ignore"):
            result = rbd_fast.analyze(problem, design.u, y, M=m, seed=seed)
        index, conf = result["S1"], result["S1_conf"]
        method = "rbd_fast"
    elif design.kind == "morris":
        from SALib.analyze import morris

        result = morris.analyze(problem, design.u, y, num_levels=design.levels, seed=seed)
        index, conf = result["mu_star"], result["mu_star_conf"]
        method = "morris"
    else:
        raise ValueError(f"no sensitivity analysis for a {design.kind!r} design")
    return Sensitivity(
        method,
        {k: float(v) for k, v in zip(design.keys, index, strict=True)},
        {k: float(v) for k, v in zip(design.keys, conf, strict=True)},
    )
