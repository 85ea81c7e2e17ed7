"""Runs that cannot end stop at the user's limit: ``max_events`` or ``max_wall_s`` on :func:`simulate`, or
a :func:`run_limits` block around a search, raise :class:`RunLimitReached` naming the limit and how far the
run got, instead of hanging."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from storagelab.kernel import (
    ClosedSource,
    Delay,
    Environment,
    Exponential,
    FixedSampler,
    OpenSource,
    RunLimitReached,
    Station,
    run_limits,
)
from storagelab.kernel.event_loop import run_until
from storagelab.kernel.run_limits import CHECK_EVERY
from storagelab.kernel.simulation import simulate


def _overloaded() -> tuple[Station, list[OpenSource]]:
    """An open source at 10x what its one-server station serves: its queue grows without bound."""
    station = Station("disk", Exponential(1e-3), servers=1)
    return station, [OpenSource("flood", station, FixedSampler(), rate=10_000.0)]


def _zero_time_loop() -> tuple[Delay, list[ClosedSource]]:
    """A closed loop whose IOs take no time and no think time: the clock never advances."""
    delay = Delay("instant", 0.0)
    return delay, [ClosedSource("loop", delay, FixedSampler(), workers=4)]


def _events_in(message: str) -> int:
    return int(re.search(r"processed ([\d,]+) events", message).group(1).replace(",", ""))


def test_an_overloaded_open_source_with_no_end_in_sight_stops_at_the_event_limit():
    target, sources = _overloaded()
    start = time.perf_counter()
    with pytest.raises(RunLimitReached, match=r"max_events=20,000") as err:
        simulate(target, sources, duration=1e9, seed=1, progress=False, max_events=20_000)
    assert time.perf_counter() - start < 30
    message = str(err.value)
    assert _events_in(message) == 20_000  # exactly the bound, not a check interval later
    assert "simulated time" in message and "of 1e+09 s" in message


def test_a_loop_at_one_instant_stops_at_the_wall_clock_limit():
    target, sources = _zero_time_loop()
    start = time.perf_counter()
    with pytest.raises(RunLimitReached, match=r"wall-clock limit max_wall_s=0.3 s") as err:
        simulate(target, sources, duration=1.0, seed=1, progress=False, max_wall_s=0.3)
    took = time.perf_counter() - start
    assert 0.3 <= took < 3.0, took
    assert "reached simulated time 0 s of 1 s" in str(err.value)


def test_the_progress_bar_path_is_guarded_too():
    target, sources = _overloaded()
    with pytest.raises(RunLimitReached, match="max_events=5,000"):
        simulate(target, sources, duration=1e6, warmup=10.0, seed=1, progress=True, max_events=5_000)


def test_a_run_limits_block_bounds_every_run_inside_it_and_keeps_the_stricter_limit():
    target, sources = _overloaded()
    with run_limits(max_events=5_000), pytest.raises(RunLimitReached) as err:
        simulate(target, sources, duration=1e9, seed=1, progress=False, max_events=10**9)
    assert _events_in(str(err.value)) == 5_000
    # the block's wall clock counts from its start, across runs (a whole search)
    with run_limits(max_wall_s=0.5):
        time.sleep(0.5)
        target, sources = _zero_time_loop()
        start = time.perf_counter()
        with pytest.raises(RunLimitReached, match=r"max_wall_s=0\.5 s") as err:
            simulate(target, sources, duration=1.0, seed=1, progress=False)
        assert time.perf_counter() - start < 0.5  # its deadline had passed: it stops before any event
        assert _events_in(str(err.value)) == 0
    # outside the block no limit is left behind
    target, sources = _overloaded()
    assert simulate(target, sources, duration=5.0, seed=1, progress=False).issued > 0


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=1, max_value=3 * CHECK_EVERY + 7), st.floats(min_value=50.0, max_value=5000.0))
def test_run_until_counts_every_event_and_stops_at_exactly_the_bound_across_calls(bound, step):
    """However the run is cut into calls (each ``step`` simulated seconds), ``events_processed`` is the
    events processed (the process's start, then one timeout per tick; never a call's stop event), and the
    run stops at exactly ``bound`` of them."""
    env = Environment()
    ticks = []

    def tick():
        while True:
            yield env.timeout(1.0)
            ticks.append(env.now)

    env.process(tick())
    k = 0
    while run_until(env, (k := k + 1) * step, max_events=bound):
        assert env.events_processed == 1 + len(ticks) < bound
    assert env.events_processed == 1 + len(ticks) == bound


def test_a_limit_that_is_not_reached_changes_no_result():
    """The same IOs and latencies; only ``events`` (entries scheduled) counts the arrivals an open source
    then schedules instead of taking them all inline."""
    runs = []
    for limits in ({}, {"max_events": 10**9, "max_wall_s": 3600.0}):
        target, sources = _overloaded()
        res = simulate(target, sources, duration=3.0, warmup=0.5, seed=7, progress=False, **limits)
        runs.append((res.issued, res.summary().to_dicts(), res.components().to_dicts()))
    assert runs[0] == runs[1]


@pytest.mark.parametrize(
    "limits",
    [{"max_events": 0}, {"max_events": -5}, {"max_events": 2.5}, {"max_events": True},
     {"max_wall_s": 0}, {"max_wall_s": float("nan")}, {"max_wall_s": float("inf")}, {"max_wall_s": "10"}],
)  # fmt: skip
def test_impossible_limits_are_refused(limits):
    target, sources = _overloaded()
    with pytest.raises(ValueError, match=next(iter(limits))):
        simulate(target, sources, duration=1.0, seed=1, progress=False, **limits)


# --- the searches and sweeps that call simulate -------------------------------------------------------


def test_a_headroom_search_stops_at_its_wall_clock_limit():
    """A search whose runs are long (an M/M/1 at 100/s x m for 10^6 simulated seconds) stops at the
    search's wall-clock limit, counted over all its runs, not per run."""
    from storagelab.analysis.headroom import LatencyObjective, headroom

    def run(m, seed):
        disk = Station("disk", Exponential(1e-3), servers=1)
        src = OpenSource("io", disk, FixedSampler(), rate=100.0 * m, cls="io")
        return simulate(disk, [src], duration=1e6, seed=seed, progress=False)

    start = time.perf_counter()
    with pytest.raises(RunLimitReached, match="max_wall_s=1 s"):
        headroom(run, [LatencyObjective("io", "mean_ms", 2.0)], low=1.0, high=9.9, max_wall_s=1.0)
    assert time.perf_counter() - start < 4.0
    with pytest.raises(RunLimitReached, match="max_events=10,000"):
        headroom(run, [LatencyObjective("io", "mean_ms", 2.0)], low=1.0, high=9.9, max_events=10_000)


def test_a_comparison_run_is_held_to_its_settings_limits():
    from storagelab.analysis.comparison import Candidate, Settings, candidate_run
    from storagelab.analysis.workload_mix import WorkloadMix

    mix = WorkloadMix.from_mapping(
        {"name": "m", "classes": [{"name": "web", "workload": "web", "size": 8.0,
                                   "service_level": {"metric": "mean_ms", "limit_ms": 20.0}}]}
    )  # fmt: skip
    run = candidate_run(mix, Candidate("curve", curve="vsan_throughput/all-flash NVMe"),
                        Settings(duration_s=1e5, warmup_s=1.0, max_events=2_000), early_stop=False)  # fmt: skip
    with pytest.raises(RunLimitReached, match="max_events=2,000"):
        run(1.0, 1)
    with pytest.raises(ValueError, match="max_wall_s"):
        Settings(max_wall_s=-1.0)


def test_a_sweep_spec_holds_its_scenario_runs_to_its_limits(tmp_path):
    from storagelab.pipeline.sweeps import SweepError, execute_run, load_spec, plan

    spec, source = load_spec({"name": "s", "scenario": "storagelab.pipeline.scenarios:mmc_queue",
                              "fixed": {"duration_s": 1e6}, "max_events": 1_000})  # fmt: skip
    (run,) = plan(spec, source)
    with pytest.raises(RunLimitReached, match="max_events=1,000"):
        execute_run(spec.target, run.params, run.seed, run.key, str(tmp_path), "s", "v",
                    limits=(spec.max_events, spec.max_wall_s))  # fmt: skip
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []  # nothing stored
    for bad in ({"max_events": 0}, {"max_wall_s": float("nan")}, {"notebook": "11-vsan-scaling", "scenario": None,
                                                                 "max_events": 10}):  # fmt: skip
        with pytest.raises(SweepError, match=next(iter(bad)) if "notebook" not in bad else "max_events"):
            load_spec({"name": "s", "scenario": "storagelab.pipeline.scenarios:mmc_queue", **bad})


def test_a_run_without_limits_counts_its_events_too():
    """The loop without limits (no countdown) leaves the same count: the process's start, one timeout per
    tick, never the stop event; a limited call after it counts on from there."""
    env = Environment()
    ticks = []

    def tick():
        while True:
            yield env.timeout(1.0)
            ticks.append(env.now)

    env.process(tick())
    assert run_until(env, 100.5) and env.events_processed == 1 + len(ticks) == 101
    assert run_until(env, 200.5) and env.events_processed == 201
    assert not run_until(env, 1e9, max_events=250) and env.events_processed == 1 + len(ticks) == 250
