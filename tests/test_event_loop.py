"""The kernel's event loop and in-event completions behave as SimPy's ``run`` and ``succeed`` do."""

from __future__ import annotations

import pytest
import simpy
from hypothesis import given, settings
from hypothesis import strategies as st

from storagelab.kernel import Delay, Deterministic, Environment, IORequest, Path, RunContext
from storagelab.kernel.component import fire
from storagelab.kernel.event_loop import run_until
from storagelab.kernel.randomness import RandomStreams


def _schedule(env: Environment | simpy.Environment, log: list) -> None:
    """Timeouts at repeated times (ties broken by priority and order), a process, and one event at 5.0."""

    def proc(env):
        for k in range(4):
            yield env.timeout(1.25)
            log.append(("proc", env.now, k))

    env.process(proc(env))
    for i, t in enumerate([0.5, 2.5, 2.5, 1.0, 5.0, 4.999, 7.0]):
        env.timeout(t, i).callbacks.append(lambda ev, t=t: log.append(("timeout", ev.env.now, ev.value)))


def test_run_until_processes_the_events_simpy_run_does_in_the_same_order():
    ours, theirs = [], []
    a, b = Environment(), Environment()  # the kernel's, and SimPy's
    _schedule(a, ours)
    _schedule(b, theirs)
    run_until(a, 5.0)
    b.run(until=5.0)
    assert ours == theirs and a.now == b.now == 5.0
    assert ("timeout", 5.0, 4) not in ours  # an event exactly at `until` waits for the next call
    run_until(a, 8.0)
    b.run(until=8.0)
    assert ours == theirs


def test_run_until_stops_on_a_failed_event_as_simpy_does():
    env = Environment()
    env.timeout(1.0).callbacks.append(lambda _ev: env.event().fail(ValueError("disk on fire")))
    with pytest.raises(ValueError, match="disk on fire"):
        run_until(env, 2.0)
    with pytest.raises(ValueError, match="must be greater"):
        run_until(Environment(), 0.0)


def test_a_composite_completed_in_event_resumes_a_simpy_process_at_the_right_time():
    env = Environment()
    path = Path("path", [Delay("a", 0.002), Delay("b", 0.003)])
    path.bind(RunContext(env=env, streams=RandomStreams(1)))
    seen = []

    def user(env):
        io = yield path.submit(IORequest(True, 4096))
        seen.append((env.now, io.size))

    env.process(user(env))
    run_until(env, 1.0)
    assert seen == [(pytest.approx(0.005), 4096)]


def test_fire_runs_callbacks_once_and_marks_the_event_processed():
    env = Environment()
    ev, calls = env.event(), []
    ev.callbacks.append(lambda e: calls.append(e.value))
    fire(ev, "done")
    assert calls == ["done"] and ev.triggered and ev.processed and ev.ok


def test_inline_arrivals_never_run_past_until():
    """An open-loop source takes an arrival inline only if it precedes every scheduled event; the stop
    event run_until keeps in the queue is what stops it at ``until``."""
    from storagelab.kernel import Exponential, FixedSampler, OpenSource, Station

    env = Environment()
    ctx = RunContext(env=env, streams=RandomStreams(2))
    station = Station("q", Exponential(1e-3))
    station.bind(ctx)
    src = OpenSource("a", station, FixedSampler(), rate=500.0)
    src.bind(ctx)
    run_until(env, 1.0)
    assert env.now == 1.0
    issued = src.issued_total
    assert 400 < issued < 600  # about 500 arrivals in the first second, none after it
    run_until(env, 2.0)
    assert 900 < src.issued_total < 1100


def test_the_cyclic_collector_is_off_while_run_until_runs_and_back_on_after():
    """Off during the run, on after it (also when the run fails); a caller that turned it off keeps it off."""
    import gc

    env, seen = Environment(), []
    env.timeout(1.0).callbacks.append(lambda _ev: seen.append(gc.isenabled()))
    assert gc.isenabled()
    run_until(env, 2.0)
    assert seen == [False] and gc.isenabled()

    env.timeout(1.0).callbacks.append(lambda _ev: env.event().fail(ValueError("disk on fire")))
    with pytest.raises(ValueError):
        run_until(env, 4.0)
    assert gc.isenabled()

    gc.disable()
    try:
        run_until(env, 6.0)
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("model", ["M/M/4", "closed cluster", "vSAN hybrid"])
def test_a_run_leaves_no_more_cyclic_garbage_when_it_runs_four_times_longer(model):
    """What lets the event loop turn the cyclic collector off: the per-IO objects (IOs, events, their
    callbacks) form no reference cycles, so a run four times longer, with four times the IOs, leaves
    about the same cyclic garbage (its components' set-up), not four times as much."""
    import gc

    from storagelab.studies.vsan import preset
    from storagelab.studies.vsan.workloads import vsan_iometer
    from storagelab.verify import benchmark

    def run(scale: float) -> int:
        if model == "M/M/4":
            return benchmark.run_storagelab_mm4(5.0 * scale, 0.5, 1).simulated_ios
        if model == "closed cluster":
            return benchmark.run_storagelab_closed(0.5 * scale, 0.1, 1).simulated_ios
        res = preset.vsan("hybrid Xeon E5 v3", read_cache_resident=0.7).run(
            vsan_iometer(vms=16), seed=1, duration=0.1 + 0.25 * scale, warmup=0.1
        )
        return int(res.summary()["count"].sum())

    garbage = {}
    gc.collect()
    gc.disable()
    try:
        for scale in (1, 4):
            ios = run(scale)
            garbage[scale] = (ios, gc.collect())
    finally:
        gc.enable()
    (short_ios, short), (long_ios, long) = garbage[1], garbage[4]
    assert long_ios > 3 * short_ios
    assert long < 1.2 * short + 200, garbage


def _fire_last_order(use_fire_last: bool, tie: bool) -> tuple[list, int]:
    """Event X at 1.0 whose last callback completes ``done`` (with fire_last, or with succeed as SimPy
    does), and Y, due at 1.0 too when ``tie``, else at 2.0; the order their callbacks ran in and how many
    events the queue held just after X's callback."""
    from storagelab.kernel.component import fire_last

    env, log, held = Environment(), [], []
    done = env.event()
    done.callbacks.append(lambda e: log.append(("done", e.env.now, e.value)))

    def last(_ev):
        log.append(("x", env.now))
        fire_last(done, "v") if use_fire_last else done.succeed("v")
        held.append(len(env._queue))

    env.timeout(1.0).callbacks.append(last)
    env.timeout(1.0 if tie else 2.0).callbacks.append(lambda e: log.append(("y", e.env.now)))
    run_until(env, 5.0)
    return log, held[0]


@pytest.mark.parametrize("tie", [False, True])
def test_fire_last_runs_callbacks_in_the_order_succeed_gives_them(tie):
    """With nothing else due at the instant, inline and without a queued event; with another event due
    then (a tie), queued behind it, as ``succeed`` does."""
    ours, ours_held = _fire_last_order(True, tie)
    simpys, simpy_held = _fire_last_order(False, tie)
    assert ours == simpys
    assert ours.index(("done", 1.0, "v")) == (2 if tie else 1)  # after y only when y is due at 1.0 too
    # the stop event and y, and done when it was queued: one fewer event where it ran inline
    assert ours_held == simpy_held - (0 if tie else 1)


def test_the_kernels_environment_runs_simpy_events_and_processes_as_simpy_does():
    """The kernel's Environment is SimPy's API: ``run`` to a time, to an event (its value back), to an empty
    queue; ``step`` and ``peek`` at the end; processes, timeouts and conditions in the same order."""
    from simpy.core import EmptySchedule

    ours, theirs = [], []
    a, b = Environment(), simpy.Environment()
    _schedule(a, ours)
    _schedule(b, theirs)
    a.run(until=5.0)
    b.run(until=5.0)
    assert ours == theirs and a.now == b.now == 5.0
    for env, log in ((a, ours), (b, theirs)):
        done = env.all_of([env.timeout(0.5, "x"), env.timeout(1.5, "y")])
        assert sorted(env.run(until=done).values()) == ["x", "y"]
        env.run()
        log.append(("end", env.now))
        assert env.peek() == float("inf")
        with pytest.raises(EmptySchedule):
            env.step()
    assert ours == theirs
    with pytest.raises(ValueError, match="must be greater"):
        a.run(until=a.now)


def test_a_paths_io_woken_from_the_queue_completes_as_with_an_event_per_stage():
    """Under the kernel's Environment a path's IO waits in the queue itself at each timed stage (no event
    made for it), moved on by ``run_until`` and by ``run`` alike; with ``wakes_paths=False`` it waits on each
    stage's event. The completion times are the same, and so is the number of scheduled events."""
    from storagelab.kernel import Exponential, Link, Station

    def completions(env, runner) -> tuple[list[float], int]:
        path = Path("path", [Delay("stack", Exponential(2e-4)), Link("port", 1e9, 1e-5),
                             Station("cpu", Exponential(1e-4), servers=2), Station("disk", Deterministic(3e-4))])  # fmt: skip
        path.bind(RunContext(env=env, streams=RandomStreams(3)))
        done: list[float] = []
        for k in range(200):
            env.timeout(k * 1e-4).callbacks.append(
                lambda _e: path.submit(IORequest(True, 4096)).callbacks.append(
                    lambda _d: done.append(env.now)
                )
            )
        runner(env)
        return done, env._queue.scheduled

    woken = completions(Environment(), lambda env: run_until(env, 1.0))
    stepped = completions(Environment(), lambda env: env.run(until=1.0))
    evented = completions(Environment(wakes_paths=False), lambda env: env.run(until=1.0))
    assert len(woken[0]) == 200 and woken[0] == stepped[0] == evented[0]
    # as many events scheduled (``run`` schedules its stop event again as it stops, as SimPy's does)
    assert woken[1] + 1 == stepped[1] == evented[1]


def test_components_and_sources_are_bound_to_the_kernels_environment_only():
    """Compiled, a component holds its environment as the kernel's class: binding one to SimPy's own is a
    clear error, the same run pure Python."""
    from storagelab.kernel import ClosedSource, FixedSampler, Station

    ctx = RunContext(env=simpy.Environment(), streams=RandomStreams(1))
    with pytest.raises(TypeError, match=r"component 'q'.*must be storagelab.kernel.Environment.*simpy"):
        Station("q", Deterministic(1e-3)).bind(ctx)
    with pytest.raises(TypeError, match=r"source 'w'.*must be storagelab.kernel.Environment"):
        ClosedSource("w", Delay("d", 1e-3), FixedSampler(), workers=1).bind(ctx)


@pytest.mark.parametrize("queue_class", ["EventQueue", "TupleEventQueue"])
def test_both_event_queues_pop_by_time_then_priority_then_scheduling_order(queue_class):
    """The native heap (what a compiled run uses) and heapq on tuples (a pure-Python run's) pop entries in
    the order of ``sorted`` on (time, priority, scheduling number), pushes and pops interleaved, with many
    ties in time (times drawn from eight values) and priority (-1, 0 and 1), and say when the next is due."""
    import random

    from storagelab.kernel import event_queue

    rng = random.Random(7)
    queue = getattr(event_queue, queue_class)()
    pending: list[tuple[float, int, int]] = []
    popped, expected = [], []
    for n in range(5000):
        time, priority = rng.choice([0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5]), rng.choice([-1, 0, 1])
        queue.push(time, priority, n)
        pending.append((time, priority, n))
        if rng.random() < 0.45:
            pending.sort()
            assert queue.first() == pending[0][0]
            time, _, n_first = pending.pop(0)
            expected.append(n_first)
            popped.append(queue.pop())
            assert queue.time == time  # the popped entry's time
    pending.sort()
    while not queue.empty():
        expected.append(pending.pop(0)[2])
        popped.append(queue.pop())
    assert popped == expected and len(popped) == 5000 and queue.scheduled == 5000
    assert queue.first() == float("inf") and len(queue) == 0
    with pytest.raises(IndexError):
        queue.pop()


_ENTRY = st.tuples(st.sampled_from([0.0, 1.0, 2.0]), st.sampled_from([-1, 0, 1]))


@pytest.mark.parametrize("queue_class", ["EventQueue", "TupleEventQueue"])
@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    early=st.lists(_ENTRY, max_size=6), late=st.lists(_ENTRY, min_size=1, max_size=12), room=st.integers(0, 8)
)
def test_an_event_queue_past_its_key_range_stops_with_a_clear_error(queue_class, early, late, room):
    """Both queues keep (time, priority, scheduling number) order up to ``LIMIT`` (2**40) entries a run and
    refuse the next with :class:`EventQueueFull`, naming the count, instead of popping out of order. The
    counter starts ``room`` entries short of the limit after the ``early`` pushes (the entries still
    waiting from the start of a long run): each ``late`` push past the limit raises and adds nothing.
    Before the guard the native heap's key ``priority x 2**40 + number`` tied number 2**40 + m at priority
    p with number m at priority p + 1, so a late URGENT (0) event popped after an early NORMAL (1) one at
    the same time."""
    from storagelab.kernel import event_queue

    queue = getattr(event_queue, queue_class)()
    accepted: list[tuple[float, int, int]] = []
    for number, (time, priority) in enumerate(early):
        queue.push(time, priority, number)
        accepted.append((time, priority, number))
    queue.scheduled = event_queue.LIMIT - room
    refused = 0
    for time, priority in late:
        number = queue.scheduled
        try:
            queue.push(time, priority, number)
        except event_queue.EventQueueFull as err:
            assert number >= event_queue.LIMIT and "2**40" in str(err) and f"{number:,}" in str(err)
            refused += 1
            continue
        accepted.append((time, priority, number))
    popped = [queue.pop() for _ in range(len(queue))]
    assert popped == [n for _t, _p, n in sorted(accepted)]
    assert refused == max(0, len(late) - room)
