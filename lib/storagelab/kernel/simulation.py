"""``simulate(...)``: run a topology under workloads for a simulated duration and collect tidy results.

>>> result = simulate(array, [ClosedSource("oltp", array, spec, workers=16)], duration=60, warmup=10, seed=1)
>>> result.summary()                 # per class: IOs, IOPS, MB/s, mean and percentile latencies
>>> result.service_level_curve()     # share of IOs under t, per class
>>> result.components()              # per component: utilisation, waiting, hits, ...

One seed per run; every component and source draws from its own stream derived from the seed and its
name, so the same seed gives identical results in any process.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import polars as pl
from tqdm.auto import tqdm

from storagelab.kernel.component import Component, RunContext
from storagelab.kernel.event_loop import Environment, run_until
from storagelab.kernel.metrics import LatencyRecorder
from storagelab.kernel.randomness import RandomStreams
from storagelab.kernel.run_limits import RunLimits, limits_for, reached
from storagelab.kernel.sources import Source

#: The progress bar advances in this many steps of simulated time.
PROGRESS_CHUNKS = 50


@dataclass
class SimulationResult:
    """What one run measured after its warm-up, as tidy Polars frames."""

    seed: int
    duration: float
    warmup: float
    wall_seconds: float
    events: int
    recorder: LatencyRecorder
    component_stats: pl.DataFrame
    source_stats: pl.DataFrame
    #: IOs the sources issued from the start, warm-up included: what the run simulated (its cost grows
    #: with it), the same for the same seed however the kernel schedules its events
    issued: int = 0

    @property
    def measured(self) -> float:
        """Seconds of simulated time measured (duration minus warm-up)."""
        return self.duration - self.warmup

    def summary(self) -> pl.DataFrame:
        """Per class: completed IOs, IOPS, MB/s, mean and percentile latencies (ms)."""
        return self.recorder.summary()

    def rates(self, bin_s: float = 1.0) -> pl.DataFrame:
        """IOPS and MB/s per class in time bins of ``bin_s`` seconds."""
        return self.recorder.rates(bin_s)

    def service_level_curve(self, thresholds_ms: Sequence[float] | None = None) -> pl.DataFrame:
        """Share of IOs completed in under t, per class, for t on a grid (ms)."""
        return self.recorder.service_level_curve(thresholds_ms)

    def components(self) -> pl.DataFrame:
        """Per-component statistics (long format: component, statistic, value)."""
        return self.component_stats

    def utilisations(self) -> pl.DataFrame:
        """Each component's utilisation (the share of the measured time its servers were busy, per
        server), busiest first: columns component, value."""
        return (
            self.component_stats.filter(pl.col("statistic") == "utilisation")
            .sort("value", descending=True)
            .select("component", "value")
        )

    def bottleneck(self) -> tuple[str, float]:
        """The busiest component and its utilisation (``("", nan)`` if no component reports one)."""
        util = self.utilisations()
        if util.is_empty():
            return "", math.nan
        return str(util["component"][0]), float(util["value"][0])

    def littles_law(self) -> pl.DataFrame:
        """Per source: time-averaged IOs in system L against lambda x W from completions and latencies."""
        return self.source_stats


def _run(env: Environment, until: float, progress: bool, label: str, limits: RunLimits, end: float) -> None:
    """Run ``env`` to ``until`` (s) within ``limits``; ``end``: the run's whole duration (for messages)."""
    bound = limits.max_events or 0
    if not progress:
        if not run_until(env, until, bound, limits.deadline):
            raise reached(limits, env.events_processed, env.now, end, "the simulation")
        return
    start = env.now
    step = (until - start) / PROGRESS_CHUNKS
    with tqdm(total=round(until - start, 6), desc=label, unit="sim s", leave=False) as bar:
        for i in range(1, PROGRESS_CHUNKS + 1):
            t = until if i == PROGRESS_CHUNKS else start + i * step
            if not run_until(env, t, bound, limits.deadline):
                raise reached(limits, env.events_processed, env.now, end, "the simulation")
            bar.update(round(t - start - bar.n, 6))


def simulate(
    target: Component,
    sources: Sequence[Source],
    *,
    duration: float,
    warmup: float = 0.0,
    seed: int = 0,
    progress: bool = True,
    stop: Callable[[SimulationResult], bool] | None = None,
    checks: Sequence[float] = (0.125, 0.25, 0.5),
    max_events: int | None = None,
    max_wall_s: float | None = None,
) -> SimulationResult:
    """Run ``sources`` against ``target`` for ``duration`` simulated seconds; measure after ``warmup``.

    ``progress`` shows a progress bar over simulated time. With ``stop``, the run pauses at each of
    ``checks`` (fractions of the measured time, increasing, in (0, 1)) and asks ``stop`` with the
    result so far (measured from the warm-up to that moment); when it answers True the run ends there,
    and the result's ``duration`` says where (a sequential decision, e.g. a service level already
    clearly met or missed: :class:`storagelab.analysis.headroom.ClearOutcome`). Raises ``ValueError``
    on an impossible run (non-positive duration, warm-up not shorter than the duration, no sources).

    Guards against a run that cannot end (:mod:`storagelab.kernel.run_limits`): ``max_events``, the
    events the run may process (warm-up included), and ``max_wall_s``, the wall-clock seconds it may
    take; the stricter of these and those of an enclosing :func:`~storagelab.kernel.run_limits.run_limits`
    block hold. Reaching one raises :class:`~storagelab.kernel.run_limits.RunLimitReached`, naming the
    limit and how far the run got.
    """
    if not duration > 0:
        raise ValueError(f"duration must be > 0 s, got {duration}")
    if not 0 <= warmup < duration:
        raise ValueError(f"warmup must be in [0, duration), got {warmup} for duration {duration}")
    if not sources:
        raise ValueError("simulate needs at least one source of IOs")
    names, classes = [s.name for s in sources], [s.cls for s in sources]
    if len(set(names)) < len(names) or len(set(classes)) < len(classes):
        raise ValueError(
            f"sources need distinct names and classes (they name random streams and results); "
            f"got names {names} and classes {classes}"
        )
    if stop is not None and not (
        checks and all(0 < a < b <= 1 for a, b in zip(checks, [*checks[1:], 1.0], strict=True))
    ):
        raise ValueError(
            f"checks must be increasing fractions of the measured time in (0, 1), got {checks!r}"
        )
    limits = limits_for(max_events, max_wall_s)
    env = Environment()
    recorder = LatencyRecorder(warmup_s=warmup, end_s=duration)
    ctx = RunContext(env=env, streams=RandomStreams(seed), recorder=recorder)
    target.bind(ctx)
    for s in sources:
        if s.target.ctx is not ctx:
            s.target.bind(ctx)
        s.bind(ctx)
    wall = time.perf_counter()
    if warmup > 0:
        _run(env, warmup, progress, "warm-up", limits, duration)
        for comp in ctx.components.values():
            comp.reset_stats()
        for s in sources:
            s.reset_stats()
    until = duration
    for fraction in checks if stop is not None else ():
        _run(env, warmup + fraction * (duration - warmup), progress, "simulating", limits, duration)
        # measured on a copy of the recorder: its batches, and so the sums it accumulates, stay as an
        # uninterrupted run's, so a run the checks do not stop gives the same results to the last digit
        partial = _result(
            ctx, sources, copy.deepcopy(recorder), seed, env._now, warmup, time.perf_counter() - wall
        )
        if stop(partial):
            return partial
    _run(env, until, progress, "simulating", limits, duration)
    return _result(ctx, sources, recorder, seed, until, warmup, time.perf_counter() - wall)


def _result(
    ctx: RunContext,
    sources: Sequence[Source],
    recorder: LatencyRecorder,
    seed: int,
    duration: float,
    warmup: float,
    wall: float,
) -> SimulationResult:
    """What the run measured from ``warmup`` to ``duration`` (s, the simulated time now)."""
    recorder.flush()
    elapsed = duration - warmup
    comp_rows = [
        {"component": name, "kind": type(c).__name__, "statistic": k, "value": float(v)}
        for name, c in ctx.components.items()
        for k, v in c.stats(elapsed).items()
    ]
    comp_stats = pl.DataFrame(
        comp_rows,
        schema={"component": pl.String, "kind": pl.String, "statistic": pl.String, "value": pl.Float64},
    )
    summary = recorder.summary()
    src_rows = []
    for s in sources:
        ll = s.littles_law()
        row = summary.filter(pl.col("class") == s.cls)
        mean_ms = row["mean_ms"][0] if row.height else None
        mean_ms = float("nan") if mean_ms is None else mean_ms  # no IO of the class completed in the window
        lam = ll["completed"] / ll["elapsed"] if ll["elapsed"] > 0 else float("nan")
        src_rows.append(
            {
                "source": s.name,
                "class": s.cls,
                "L_time_average": ll["mean_in_system"],
                "lambda_per_s": lam,
                "W_ms": mean_ms,
                "lambda_W": lam * mean_ms / 1e3,
            }
        )
    return SimulationResult(
        seed=seed,
        duration=duration,
        warmup=warmup,
        wall_seconds=wall,
        events=ctx.env._queue.scheduled,  # entries scheduled
        recorder=recorder,
        component_stats=comp_stats,
        source_stats=pl.DataFrame(src_rows),
        issued=sum(s.issued_total for s in sources),
    )
