"""A scenario's predictions with their uncertainty (issue 68): the design of its parameter draws, and each
point's predictive interval, drivers and leave-one-out flag from the runs over them.

The calibration engine (:func:`storagelab.calibration.run_scenarios` with ``uncertainty=n``) runs each
scenario's first replication inside :func:`~storagelab.provenance.recording_uncertain`, which finds the
uncertain parameters its presets read; :func:`scenario_design` draws ``n`` values of them; the engine runs
the scenario once per draw at the first replication's seed (common random numbers); :func:`summarise` turns
the runs into the columns of :data:`~storagelab.calibration.claims.UNCERTAINTY_SCHEMA`.

**No point is predicted by a fit that saw it.** A fitted parameter declares the rows it was fitted on
(``fitted_on``) and, as ``prior``, the range its evidence allows without them. A scenario with one of those
rows among its points draws that parameter from its ``prior`` instead of its ``uncertainty`` (the fit redone
without the rows, leave one out over the fitted rows); its points on those rows are ``left_out_of_fit``. A fit
with no ``prior`` is drawn from its own spread, and its points stay ``fitted``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from storagelab.calibration.claims import Replications, Scenario
from storagelab.provenance import Param, ParamKey
from storagelab.uncertainty.design import Design, sobol_design
from storagelab.uncertainty.propagation import interval, scenario_seed, stability
from storagelab.uncertainty.sensitivity import sensitivity

#: Drivers listed per point, most influential first.
DRIVERS_SHOWN = 3

#: Draws run a second time, at the second replication's seed, per scenario: how much of the common seed's
#: noise the draws share (:func:`~storagelab.uncertainty.propagation.predictive_sample`'s ``repeats``).
#: On the known-truth station one repeat brings the mean 80 % coverage over 1,800 truths from 82.6 / 82.1 %
#: to 81.6 / 81.8 %, as much as two (81.6 / 81.6) or four (81.4 / 81.4), for a twentieth more runs.
REPEATS = 1


def scenario_design(
    scenario: Scenario, recorded: Mapping[ParamKey, Param], n: int, seed: int
) -> tuple[Design, frozenset[str]]:
    """``n`` draws of the uncertain parameters ``recorded`` for ``scenario`` (a scrambled Sobol' design
    seeded by the run's ``seed`` and the scenario's name), and the row ids left out of a fit: each fit
    whose ``fitted_on`` names one of the scenario's points and that has a ``prior`` is drawn from that
    prior."""
    rows = {p.row_id for p in scenario.points}
    dists = {}
    left_out: set[str] = set()
    for key, param in recorded.items():
        seen = rows.intersection(param.fitted_on) if param.origin == "fit" else set()
        if seen and param.prior is not None:
            dists[key] = param.prior
            left_out |= seen
        else:
            dists[key] = param.uncertainty
    design = sobol_design(dists, n, scenario_seed(seed, scenario.study, scenario.name))
    return design, frozenset(left_out)


def drivers(design: Design, outputs: Sequence[float]) -> str:
    """The parameters that decide one output, most first: ``preset: parameter (index)``, ``; ``-joined;
    empty when the draws cannot rank them (a failed draw, too few draws for RBD-FAST, or an output that
    does not move)."""
    if len(design) <= 8 or not all(math.isfinite(y) for y in outputs) or len(set(outputs)) == 1:
        return ""
    ranked = sensitivity(design, outputs).ranked()[:DRIVERS_SHOWN]
    return "; ".join(f"{p}: {name} ({index:.2f})" for (p, name), index in ranked)


def _value(values: dict[str, float], err: str, key: str) -> float:
    x = values.get(key)
    return math.nan if err or x is None else float(x)


def summarise(
    scenario: Scenario,
    design: Design | None,
    left_out: frozenset[str],
    main: Replications,
    draws: Sequence[tuple[dict[str, float], str]],
    repeats: Sequence[tuple[dict[str, float], str]] = (),
) -> dict[str, dict[str, object]]:
    """Per point key, its uncertainty columns: the predictive interval over ``draws`` (one run per draw of
    ``design``, in its order, at the seed of the first of the ``main`` replications) plus the noise of the
    ``main`` replications, with the first draws' ``repeats`` at the second replication's seed
    (:func:`~storagelab.uncertainty.propagation.interval`). A scenario with no
    uncertain parameter (``design`` None or without keys) takes its first replication as its one draw
    (``draws`` 0): its interval is the simulation noise alone."""
    out: dict[str, dict[str, object]] = {}
    for p in scenario.points:
        # every replication in seed order, NaN where it failed: the first is the draws' seed, the second
        # the repeats'
        reps = [_value(v, err, p.key) for v, err in zip(main.values, main.errors, strict=True)]
        common = reps[0]
        if design is None or not design.keys:
            iv = interval([common], reps, common)
            row = {**iv.as_row(), "draws": 0, "drivers": "", "halving_shift": math.nan}
        else:
            values = [_value(v, err, p.key) for v, err in draws]
            again = [_value(v, err, p.key) for v, err in repeats]
            iv = interval(values, reps, common, again)
            row = {
                **iv.as_row(), "drivers": drivers(design, values),
                "halving_shift": stability(values, reps, common, again),
            }  # fmt: skip
        row["left_out_of_fit"] = p.row_id in left_out
        out[p.key] = row
    return out
