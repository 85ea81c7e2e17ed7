"""The calibration engine: scenarios run against the published points they reproduce, scored as claims.
Where the published and the simulated wings meet; it knows no study (the studies' scenarios and the
calibration of them all are :func:`storagelab.studies.calibrate`).

>>> from storagelab import studies
>>> result = studies.calibrate(study="ds5020", quick=True)   # a CalibrationResult
>>> result.claims(); result.pass_rates(); result.chart()

:func:`run_scenarios` runs any scenarios and scores them; the rules that turn points into claims and
claims into a headline are in :mod:`storagelab.calibration.claims`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence

import polars as pl

from storagelab.calibration import propagation
from storagelab.calibration.claims import (
    COLUMNS,
    SCHEMA,
    SENSITIVITY_FACTORS,
    UNCERTAINTY_COLUMNS,
    UNCERTAINTY_SCHEMA,
    Point,
    Replications,
    Scenario,
    settle_claims,
    tabulate,
)
from storagelab.calibration.results import CalibrationResult
from storagelab.uncertainty.design import Design

__all__ = [
    "COLUMNS",
    "UNCERTAINTY_COLUMNS",
    "CalibrationResult",
    "Point",
    "Scenario",
    "run_scenarios",
]  # fmt: skip


def run_scenarios(
    scenarios: Sequence[Scenario],
    fitted: set[str],
    *,
    replications: int,
    sensitivity: bool = True,
    perturbed_replications: int = 2,
    seed: int = 1,
    quick: bool = True,
    confidence: float = 0.95,
    progress: Callable[[str], None] | None = None,
    workers: int | None = 1,
    uncertainty: int = 0,
) -> CalibrationResult:
    """The engine of :func:`calibrate`: run each scenario ``replications`` times (seeds ``seed``,
    ``seed + 1``, ...), and with ``sensitivity`` ``perturbed_replications`` times at each capacity
    scale of :data:`~storagelab.calibration.claims.SENSITIVITY_FACTORS` where those runs can still change
    a claim's sensitivity (:func:`perturbed_runs_needed`); score the points.

    ``uncertainty``: with ``n > 0``, each scenario also runs once per draw of ``n`` draws of the uncertain
    parameters its presets read (found by running its first replication inside
    :func:`~storagelab.provenance.recording_uncertain`), every draw at seed ``seed`` (common random
    numbers), and the first :data:`~storagelab.calibration.propagation.REPEATS` draws once more at seed
    ``seed + 1`` (with two replications or more: what each draw's noise shares with the common seed's),
    and the table gains :data:`~storagelab.calibration.claims.UNCERTAINTY_COLUMNS`
    (:mod:`storagelab.calibration.propagation`). 0 (default) runs as before, at the declared values only.

    ``workers``: 1 runs everything here, one replication after another; more (``None``: one per core)
    runs the replications on a local Dask cluster of that many single-threaded processes. Every
    replication is seeded, so the table is the same either way. ``progress`` is called with a line per
    replication as it finishes."""
    if isinstance(uncertainty, bool) or not isinstance(uncertainty, int) or uncertainty < 0:
        raise ValueError(f"uncertainty must be a whole number of draws >= 0, got {uncertainty!r}")
    factors = SENSITIVITY_FACTORS if sensitivity else ()
    designs: dict[int, tuple[Design, frozenset[str]]] = {}

    repeats = min(propagation.REPEATS, uncertainty) if replications >= 2 else 0

    def runs_of(i: int, f: Kind) -> list[Task]:
        if isinstance(f, tuple):
            return [(i, f, seed + 1 if f[0] == "repeat" else seed)]
        return [(i, f, seed + r) for r in range(replications if f is None else perturbed_replications)]

    def follow(i: int, kind: Kind, done: dict[Kind, Replications], recorded: dict | None) -> list[Task]:
        """The scenario's next runs, once every run of one ``kind`` is in (``done``: its complete runs so
        far, by kind): after the main run, the draws (the uncertain parameters it read are ``recorded``);
        after the main run or a perturbed one, the next perturbed run, unless it cannot change any claim's
        sensitivity; after a draw, nothing."""
        if isinstance(kind, tuple):
            return []
        more: list[Task] = []
        if kind is None and uncertainty:
            designs[i] = propagation.scenario_design(scenarios[i], recorded or {}, uncertainty, seed)
            if designs[i][0].keys:
                more += [t for j in range(uncertainty) for t in runs_of(i, ("draw", j))]
                more += [t for j in range(repeats) for t in runs_of(i, ("repeat", j))]
        nominal = {f: r for f, r in done.items() if not isinstance(f, tuple)}
        k = len(nominal) - 1  # perturbed scales run so far
        if k < len(factors) and perturbed_runs_needed(scenarios[i], nominal):
            more += runs_of(i, factors[k])
        return more

    def draw_of(t: Task) -> dict | None:
        i, f, _ = t
        return designs[i][0].draws[f[1]] if isinstance(f, tuple) else None

    bound = len(scenarios) * (replications + len(factors) * perturbed_replications + uncertainty + repeats)
    initial = [t for i in range(len(scenarios)) for t in runs_of(i, None)]
    record = {(i, None, seed) for i in range(len(scenarios))} if uncertainty else set()
    results = _run_tasks(scenarios, initial, follow, draw_of, record, quick, workers, progress, bound)
    rows = []
    for i, sc in enumerate(scenarios):
        runs = {
            f: Replications.of_runs([results[t] for t in runs_of(i, f)])
            for f in (None, *factors)
            if all(t in results for t in runs_of(i, f))
        }
        main = runs.pop(None)
        point_rows = tabulate(sc, main, runs, fitted, confidence)
        if uncertainty:
            design, left_out = designs[i]
            draws = [results[t] for j in range(uncertainty) for t in runs_of(i, ("draw", j)) if t in results]
            again = [results[t] for j in range(repeats) for t in runs_of(i, ("repeat", j)) if t in results]
            extra = propagation.summarise(sc, design if design.keys else None, left_out, main, draws, again)
            for row in point_rows:
                row.update(extra[row["point"]])
        rows += point_rows
    schema = {**SCHEMA, **UNCERTAINTY_SCHEMA} if uncertainty else SCHEMA
    table = settle_claims(pl.DataFrame(rows, schema=schema))
    if not sensitivity:
        table = table.with_columns(sensitive=pl.lit(None, pl.Boolean))
    return CalibrationResult(table.select(tuple(schema)))


def perturbed_runs_needed(scenario: Scenario, done: dict[float | None, Replications]) -> bool:
    """Whether a scenario's next perturbed run can change a claim's sensitivity, given its runs so far
    (``done``: the main run under ``None``, then each capacity scale run): only if one of its points
    that is not derived passes in every one of them. A claim is sensitive unless it passes in the main
    run and at both scales (:func:`~storagelab.calibration.claims.settle_claims`), so once each point of
    the scenario has failed in one of its runs, the claims' sensitivity is settled whatever the next
    scale would show, and that run is not made (its ``simulated_half`` / ``simulated_double`` are
    empty)."""
    return any(all(reps.passes(p)[0] for reps in done.values()) for p in scenario.points if not p.derived)


#: What a run is: ``None`` the main run at the declared values, a number a capacity scale of the
#: sensitivity check, ``("draw", j)`` the uncertainty analysis's draw ``j`` (at the first replication's
#: seed), ``("repeat", j)`` draw ``j`` again at the second replication's seed (the draws' own noise).
Kind = float | tuple[str, int] | None
#: One replication to run: (scenario index, kind, seed).
Task = tuple[int, Kind, int]


def _task_name(sc: Scenario, kind: float | tuple[str, int] | None, seed: int) -> str:
    name = f"{sc.study}: {sc.name}, seed {seed}"
    if isinstance(kind, tuple):
        return f"{name}, parameter draw {kind[1] + 1}" + (" again" if kind[0] == "repeat" else "")
    return name + ("" if kind is None else f", capacity x{kind:g}")


def _run_tasks(
    scenarios: Sequence[Scenario],
    initial: list[Task],
    follow: Callable[[int, Kind, dict, dict | None], list[Task]],
    draw_of: Callable[[Task], dict | None],
    record: set[Task],
    quick: bool,
    workers: int | None,
    progress: Callable[[str], None] | None,
    bound: int,
) -> dict[Task, tuple[dict[str, float], str]]:
    """Each task's ``Replications.one`` result: the ``initial`` tasks, and, each time every replication
    of one scenario at one kind of run is in, the tasks ``follow`` asks for next (given that scenario's
    replications so far, by kind, and, when the main run is the one just completed, the uncertain
    parameters the tasks in ``record`` found). ``draw_of`` gives a task's parameter draw. ``bound``: the
    most tasks there can be, for the progress lines."""
    n = workers if workers is not None else (os.cpu_count() or 1)
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"workers must be an integer >= 1 (or None: one per core), got {workers!r}")
    out: dict[Task, tuple[dict[str, float], str]] = {}
    recorded: dict[int, dict] = {}
    groups: dict[tuple[int, object], list[Task]] = {}

    def add(tasks: list[Task]) -> list[Task]:
        for t in tasks:
            groups.setdefault(t[:2], []).append(t)
        return tasks

    def finished(t: Task) -> list[Task]:
        """Record ``t``'s result (already in ``out``) and report it; the tasks to run next, if it was
        the last of its scenario and kind."""
        i, f, s = t
        if progress is not None:
            progress(f"[{len(out)} of at most {bound}] {_task_name(scenarios[i], f, s)}")
        if not all(u in out for u in groups[(i, f)]):
            return []
        done = {
            g: Replications.of_runs([out[u] for u in us])
            for (j, g), us in groups.items()
            if j == i and all(u in out for u in us)
        }
        return add(follow(i, f, done, recorded.get(i)))

    def run_here(t: Task) -> None:
        i, f, s = t
        sc = scenarios[i]
        if t in record:
            out[t], recorded[i] = Replications.discover(sc, s, quick)
        else:
            out[t] = Replications.one(sc, s, quick, None if isinstance(f, tuple) else f, draw_of(t))

    pending = add(list(initial))
    if n == 1 or bound <= 1:
        while pending:
            t = pending.pop(0)
            run_here(t)
            pending += finished(t)
        return out

    from distributed import Client, as_completed

    from storagelab.dask_cluster import local_cluster

    # Longest first, measured: the first replication of every scenario runs first (in the scenarios'
    # order); each later task of a scenario is then submitted with that replication's wall time as its
    # priority, so the costly scenarios' remaining replications, perturbed runs and draws (which wait
    # for them) go ahead and the cheap ones fill the end. The order decides only when a task runs: every
    # result is its seed's and its draw's.
    first = {}
    for t in pending:
        first.setdefault(t[0], t)
    held = [t for t in pending if first[t[0]] != t]
    cost: dict[int, int] = {}
    with local_cluster(min(n, bound)) as cluster, Client(cluster) as client:
        [remote] = client.scatter([list(scenarios)], broadcast=True)

        def submit(tasks: list[Task], priority: int) -> dict:
            return {
                client.submit(
                    _timed_one, remote, i, s, quick, None if isinstance(f, tuple) else f, draw_of((i, f, s)),
                    (i, f, s) in record, pure=False, priority=priority,
                ): (i, f, s)
                for i, f, s in tasks
            }  # fmt: skip

        futures = submit(list(first.values()), _FIRST)
        queue = as_completed(futures)
        for fut in queue:
            t = futures[fut]
            result, found, seconds = fut.result()
            out[t] = result
            if found is not None:
                recorded[t[0]] = found
            more = finished(t)
            if first[t[0]] == t:
                cost[t[0]] = round(1000 * seconds)  # ms, the priority of the scenario's later tasks
                more = [u for u in held if u[0] == t[0]] + more
            submitted = submit(more, cost[t[0]])
            futures.update(submitted)
            queue.update(submitted)
    return out


#: The priority of each scenario's first replication: above any measured cost (ms), so that every
#: scenario's cost is known early.
_FIRST = 10**9


def _timed_one(
    scenarios: list[Scenario],
    i: int,
    seed: int,
    quick: bool,
    scale: float | None,
    draw: dict | None,
    record: bool,
) -> tuple[tuple[dict[str, float], str], dict | None, float]:
    """One replication (:meth:`Replications.one`, or :meth:`Replications.discover` with ``record``) on a
    worker, the uncertain parameters it found (None unless ``record``), and its wall time (s), which
    orders the scenario's later tasks."""
    start = time.perf_counter()
    if record:
        result, found = Replications.discover(scenarios[i], seed, quick)
    else:
        result, found = Replications.one(scenarios[i], seed, quick, scale, draw), None
    return result, found, time.perf_counter() - start
