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

from storagelab.calibration.claims import (
    COLUMNS,
    SCHEMA,
    SENSITIVITY_FACTORS,
    Point,
    Replications,
    Scenario,
    settle_claims,
    tabulate,
)
from storagelab.calibration.results import CalibrationResult

__all__ = [
    "COLUMNS",
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
) -> CalibrationResult:
    """The engine of :func:`calibrate`: run each scenario ``replications`` times (seeds ``seed``,
    ``seed + 1``, ...), and with ``sensitivity`` ``perturbed_replications`` times at each capacity
    scale of :data:`~storagelab.calibration.claims.SENSITIVITY_FACTORS` where those runs can still change
    a claim's sensitivity (:func:`perturbed_runs_needed`); score the points.

    ``workers``: 1 runs everything here, one replication after another; more (``None``: one per core)
    runs the replications on a local Dask cluster of that many single-threaded processes. Every
    replication is seeded, so the table is the same either way. ``progress`` is called with a line per
    replication as it finishes."""
    factors = SENSITIVITY_FACTORS if sensitivity else ()

    def runs_of(i: int, f: float | None) -> list[Task]:
        return [(i, f, seed + r) for r in range(replications if f is None else perturbed_replications)]

    def follow(i: int, done: dict[float | None, Replications]) -> list[Task]:
        """The scenario's next perturbed runs, once its runs so far (``done``) are in: none when they
        cannot change any claim's sensitivity."""
        k = len(done) - 1  # perturbed scales run so far
        if k >= len(factors) or not perturbed_runs_needed(scenarios[i], done):
            return []
        return runs_of(i, factors[k])

    bound = len(scenarios) * (replications + len(factors) * perturbed_replications)
    initial = [t for i in range(len(scenarios)) for t in runs_of(i, None)]
    results = _run_tasks(scenarios, initial, follow, quick, workers, progress, bound)
    rows = []
    for i, sc in enumerate(scenarios):
        runs = {
            f: Replications.of_runs([results[t] for t in runs_of(i, f)])
            for f in (None, *factors)
            if all(t in results for t in runs_of(i, f))
        }
        main = runs.pop(None)
        rows += tabulate(sc, main, runs, fitted, confidence)
    table = settle_claims(pl.DataFrame(rows, schema=SCHEMA))
    if not sensitivity:
        table = table.with_columns(sensitive=pl.lit(None, pl.Boolean))
    return CalibrationResult(table.select(COLUMNS))


def perturbed_runs_needed(scenario: Scenario, done: dict[float | None, Replications]) -> bool:
    """Whether a scenario's next perturbed run can change a claim's sensitivity, given its runs so far
    (``done``: the main run under ``None``, then each capacity scale run): only if one of its points
    that is not derived passes in every one of them. A claim is sensitive unless it passes in the main
    run and at both scales (:func:`~storagelab.calibration.claims.settle_claims`), so once each point of
    the scenario has failed in one of its runs, the claims' sensitivity is settled whatever the next
    scale would show, and that run is not made (its ``simulated_half`` / ``simulated_double`` are
    empty)."""
    return any(all(reps.passes(p)[0] for reps in done.values()) for p in scenario.points if not p.derived)


#: One replication to run: (scenario index, capacity scale or None for the main run, seed).
Task = tuple[int, "float | None", int]


def _task_name(sc: Scenario, scale: float | None, seed: int) -> str:
    return f"{sc.study}: {sc.name}, seed {seed}" + ("" if scale is None else f", capacity x{scale:g}")


def _run_tasks(
    scenarios: Sequence[Scenario],
    initial: list[Task],
    follow: Callable[[int, dict[float | None, Replications]], list[Task]],
    quick: bool,
    workers: int | None,
    progress: Callable[[str], None] | None,
    bound: int,
) -> dict[Task, tuple[dict[str, float], str]]:
    """Each task's ``Replications.one`` result: the ``initial`` tasks, and, each time every replication
    of one scenario at one scale is in, the tasks ``follow`` asks for next (given that scenario's
    replications so far, by scale). ``bound``: the most tasks there can be, for the progress lines."""
    n = workers if workers is not None else (os.cpu_count() or 1)
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"workers must be an integer >= 1 (or None: one per core), got {workers!r}")
    out: dict[Task, tuple[dict[str, float], str]] = {}
    groups: dict[tuple[int, float | None], list[Task]] = {}

    def add(tasks: list[Task]) -> list[Task]:
        for t in tasks:
            groups.setdefault(t[:2], []).append(t)
        return tasks

    def finished(t: Task) -> list[Task]:
        """Record ``t``'s result (already in ``out``) and report it; the tasks to run next, if it was
        the last of its scenario and scale."""
        i, f, s = t
        if progress is not None:
            progress(f"[{len(out)} of at most {bound}] {_task_name(scenarios[i], f, s)}")
        if not all(u in out for u in groups[(i, f)]):
            return []
        done = {g: Replications.of_runs([out[u] for u in us]) for (j, g), us in groups.items() if j == i}
        return add(follow(i, done))

    pending = add(list(initial))
    if n == 1 or bound <= 1:
        while pending:
            t = pending.pop(0)
            out[t] = Replications.one(scenarios[t[0]], t[2], quick, t[1])
            pending += finished(t)
        return out

    from distributed import Client, as_completed

    from storagelab.dask_cluster import local_cluster

    # Longest first, measured: the first replication of every scenario runs first (in the scenarios'
    # order); each later task of a scenario is then submitted with that replication's wall time as its
    # priority, so the costly scenarios' remaining replications and perturbed runs (which wait for
    # them) go ahead and the cheap ones fill the end. The order decides only when a task runs: every
    # result is its seed's.
    first = {}
    for t in pending:
        first.setdefault(t[0], t)
    held = [t for t in pending if first[t[0]] != t]
    cost: dict[int, int] = {}
    with local_cluster(min(n, bound)) as cluster, Client(cluster) as client:
        [remote] = client.scatter([list(scenarios)], broadcast=True)

        def submit(tasks: list[Task], priority: int) -> dict:
            return {
                client.submit(_timed_one, remote, i, s, quick, f, pure=False, priority=priority): (i, f, s)
                for i, f, s in tasks
            }

        futures = submit(list(first.values()), _FIRST)
        queue = as_completed(futures)
        for fut in queue:
            t = futures[fut]
            out[t], seconds = fut.result()
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
    scenarios: list[Scenario], i: int, seed: int, quick: bool, scale: float | None
) -> tuple[tuple[dict[str, float], str], float]:
    """One replication (:meth:`Replications.one`) on a worker, with its wall time (s), which orders the
    scenario's later tasks."""
    start = time.perf_counter()
    result = Replications.one(scenarios[i], seed, quick, scale)
    return result, time.perf_counter() - start
