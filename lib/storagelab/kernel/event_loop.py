"""The event loop a simulation runs on, and the environment it runs in.

:class:`Environment` is SimPy's environment API (clock, event queue, ``schedule``, ``step``, ``run``,
``process``, ``timeout``, ...) as a class of the kernel's. :func:`run_until` is its ``run(until=t)``
with the step inlined: SimPy's loop schedules a stop event at ``until`` (urgent priority, so it precedes
the ordinary events of that instant), then calls ``step()`` once per event until the stop event's
callback raises; :func:`run_until` schedules the same stop event and processes the same events in the
same order (time, then priority, then scheduling order) with the same semantics (each event's callbacks
are called once, in order, with the event; a failed event nobody defused stops the run with its
exception), in one frame, and stops when it pops the stop event: it is the kernel's hot loop. An IO on a
path may be in the queue itself rather than an event (its stage gave the time it completes there:
:class:`~storagelab.kernel.composition._PathIO`); the loop, and :meth:`Environment.step`, then move it on
to its next stage, as the stage's event's one callback would have. The stop event also matters to
components: it is always in the queue, so an open-loop source that takes an arrival inline only when it
precedes every scheduled event never runs past ``until``.

:func:`run_until` may be given a bound on the events the environment has processed (its
``events_processed``, counted over every call) and a wall-clock deadline; it checks them once per
:data:`~storagelab.kernel.run_limits.CHECK_EVERY` events, counting down in a local variable (one decrement
and one comparison per event), and returns False where it stopped at one instead of at ``until``
(:func:`storagelab.simulate` then raises :class:`~storagelab.kernel.run_limits.RunLimitReached`). An open
source's arrivals taken inline (nothing scheduled before them) are part of the event before them; with a
limit, at most :data:`~storagelab.kernel.run_limits.INLINE_ARRIVALS` are, so that an overloaded open source,
whose arrivals would all be taken inline, hands control back to the loop.

While it runs, the cyclic garbage collector is off (``gc.disable()``, restored when it returns). A run
allocates an object or more per event, which would trigger collections, and each full one walks every
object the process holds (the imported libraries, a notebook's frames); but the kernel's per-IO objects
form no reference cycles, so reference counting frees them and the collections find nothing (a test
checks that the cyclic garbage a run leaves does not grow with its length). What a run does leave in
cycles (its components' set-up) is collected after it, as before.
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Iterable
from typing import Any, cast

from simpy.core import EmptySchedule, StopSimulation
from simpy.events import AllOf, AnyOf, Event, Process, Timeout

from storagelab.kernel.component import NORMAL_PRIORITY, URGENT_PRIORITY
from storagelab.kernel.composition import _PathIO
from storagelab.kernel.event_queue import EventQueue, new_event_queue
from storagelab.kernel.run_limits import CHECK_EVERY, INLINE_ARRIVALS

#: ``inline_cap`` where nothing bounds it
UNBOUNDED = 1 << 62


class Environment:
    """The environment a run is simulated in: SimPy's ``Environment`` (its clock ``now``, its event queue,
    ``schedule``, ``step``, ``run``, ``peek``, ``process``, ``timeout``, ``event``, ``all_of``, ``any_of``
    and ``active_process``), as a class of the kernel's, so that the compiled per-IO modules
    (:mod:`storagelab.kernel.native`) read and set its clock and queue as fields. SimPy's events, processes,
    conditions and resources take it as theirs.

    Its queue may also hold an IO on a :class:`~storagelab.kernel.Path` at the time its stage completes it
    (``wakes_paths``: the path's stages that know that time at arrival give it, and no event is made for
    them); :meth:`step` (so :meth:`run`) moves such an IO on, as :func:`run_until` does. With
    ``wakes_paths=False`` a path makes an event per stage instead (the same results). Components and
    sources are bound to this environment only (:class:`~storagelab.kernel.component.RunContext`); SimPy's
    own models run on it as on SimPy's. Times are seconds (floats)."""

    def __init__(self, initial_time: float = 0.0, *, wakes_paths: bool = True) -> None:
        #: whether a path's IO may be woken from the queue (see the class docstring; False: an event per stage)
        self.wakes_paths = wakes_paths
        self._now = float(initial_time)
        self._queue: EventQueue = new_event_queue()  # what is scheduled: events, and paths' IOs woken
        self._active_proc: Any = None
        #: events :func:`run_until` has processed in this environment (every call; its stop events not
        #: counted), for its ``max_events`` bound
        self.events_processed: int = 0
        #: arrivals an open source may take inline, one after another, before it schedules the next as an
        #: event: unbounded, or :data:`~storagelab.kernel.run_limits.INLINE_ARRIVALS` in a run with limits
        #: (set by :func:`run_until`)
        self.inline_cap: int = UNBOUNDED

    @property
    def now(self) -> float:
        """The current simulation time (s)."""
        return self._now

    @property
    def active_process(self) -> Any:
        """The process running now, if any."""
        return self._active_proc

    def process(self, generator: Any) -> Process:
        """A new SimPy process running ``generator``."""
        return Process(cast(Any, self), generator)

    def timeout(self, delay: float = 0, value: Any = None) -> Timeout:
        """A SimPy timeout firing ``delay`` seconds from now with ``value``."""
        return Timeout(cast(Any, self), delay, value)

    def event(self) -> Event:
        """A new pending SimPy event."""
        return Event(cast(Any, self))

    def all_of(self, events: Iterable[Any]) -> AllOf:
        """A condition that fires when every event of ``events`` has."""
        return AllOf(cast(Any, self), events)

    def any_of(self, events: Iterable[Any]) -> AnyOf:
        """A condition that fires when one event of ``events`` has."""
        return AnyOf(cast(Any, self), events)

    def schedule(self, event: Any, priority: int = NORMAL_PRIORITY, delay: float = 0) -> None:
        """Schedule ``event`` ``delay`` seconds from now with ``priority``, as SimPy's does."""
        self._queue.push(self._now + delay, priority, event)

    def peek(self) -> float:
        """The time of the next scheduled event (infinity when there is none)."""
        return self._queue.first()

    def step(self) -> None:
        """Process the next event (or move on the IO of a path woken then), as SimPy's ``step`` does;
        raises ``simpy.core.EmptySchedule`` when there is none."""
        queue = self._queue
        if queue.empty():
            raise EmptySchedule()
        event = queue.pop()
        self._now = queue.time
        if type(event) is _PathIO:
            woken: _PathIO = event
            woken(None)
            return
        callbacks, event.callbacks = event.callbacks, None
        for k, callback in enumerate(callbacks):
            try:
                callback(event)
            except StopSimulation:
                # as SimPy does: the remaining callbacks run when the simulation resumes
                event.callbacks = callbacks[k + 1 :]
                self.schedule(event, -1)
                raise
        if not event._ok and not hasattr(event, "_defused"):
            _raise_failure(event)

    def run(self, until: Any = None) -> Any:
        """Step until ``until`` (a time in s, or an event: then its value is returned), or until no event
        is left (``None``), as SimPy's ``run`` does."""
        if until is not None:
            if not hasattr(until, "callbacks"):  # a time: a stop event before the events due then
                at = float(until)
                if at <= self._now:
                    raise ValueError(f"until ({at}) must be greater than the current simulation time")
                until = Event(cast(Any, self))
                until._ok, until._value = True, None
                self.schedule(until, URGENT_PRIORITY, at - self._now)
            elif until.callbacks is None:
                return until.value
            until.callbacks.append(StopSimulation.callback)
        try:
            while True:
                self.step()
        except StopSimulation as exc:
            return exc.args[0]
        except EmptySchedule:
            if until is not None:
                raise RuntimeError(
                    f'No scheduled events left but "until" event was not triggered: {until}'
                ) from None
        return None


def _raise_failure(event: Any) -> None:
    """A failed event nobody defused stops the run, as SimPy does: with a copy of the failure whose cause
    is the original."""
    exc = type(event._value)(*event._value.args)
    exc.__cause__ = event._value
    raise exc


def run_until(env: Environment, until: float, max_events: int = 0, deadline: float = math.inf) -> bool:
    """Process the events of ``env`` up to ``until`` (s), as ``env.run(until=until)`` does; True when it
    got there. With ``max_events`` > 0 it stops (returning False) once ``env.events_processed`` reaches
    it, and with a finite ``deadline`` (a ``time.perf_counter()`` instant) once that has passed, both
    checked every :data:`~storagelab.kernel.run_limits.CHECK_EVERY` events."""
    until = float(until)
    if not until > env._now:
        raise ValueError(f"until ({until}) must be greater than the current simulation time ({env._now})")
    limited = max_events > 0 or deadline < math.inf
    env.inline_cap = INLINE_ARRIVALS if limited else UNBOUNDED
    enabled = gc.isenabled()  # a caller that turned the collector off keeps it off
    gc.disable()
    try:
        if limited:
            return _run_until_limited(env, until, max_events, deadline)
        _run_until(env, until)
        return True
    finally:
        if enabled:
            gc.enable()


def _stretch(env: Environment, max_events: int) -> int:
    """Events to process before the next check of the limits."""
    if max_events <= 0:
        return CHECK_EVERY
    return max(0, min(CHECK_EVERY, max_events - env.events_processed))


def _run_until(env: Environment, until: float) -> None:
    """The loop without limits: no count, no clock (the per-event countdown of
    :func:`_run_until_limited` costs about 3 % of a pure-Python run of timeouts)."""
    queue = env._queue
    stop = Event(cast(Any, env))
    stop._ok, stop._value = True, None
    queue.push(until, URGENT_PRIORITY, stop)
    n = queue.scheduled  # entries pushed so far: what was popped follows from what is left
    left_before = len(queue)
    while True:
        event = queue.pop()
        env._now = queue.time
        if event is stop:
            env.events_processed += left_before + queue.scheduled - n - len(queue) - 1
            return
        if type(event) is _PathIO:  # a path's IO woken at its stage's completion time: it moves on
            woken: _PathIO = event
            woken(None)
            continue
        callbacks, event.callbacks = event.callbacks, None  # type: ignore[assignment]  # processed: SimPy's own step() marks it so
        for callback in callbacks:
            callback(event)
        if not event._ok and not hasattr(event, "_defused"):
            _raise_failure(event)


def _run_until_limited(env: Environment, until: float, max_events: int, deadline: float) -> bool:
    """The loop with limits: a countdown to the next check of ``max_events`` and ``deadline``."""
    queue = env._queue
    stop = Event(cast(Any, env))
    stop._ok, stop._value = True, None
    queue.push(until, URGENT_PRIORITY, stop)
    stretch = 0
    left = 0  # events before the next check: the limits are checked first
    while True:
        if left == 0:
            env.events_processed += stretch
            if 0 < max_events <= env.events_processed or time.perf_counter() >= deadline:
                return False
            stretch = _stretch(env, max_events)
            left = stretch
            continue
        left -= 1
        event = queue.pop()
        env._now = queue.time
        if event is stop:
            env.events_processed += stretch - left - 1
            return True
        if type(event) is _PathIO:  # a path's IO woken at its stage's completion time: it moves on
            woken: _PathIO = event
            woken(None)
            continue
        callbacks, event.callbacks = event.callbacks, None  # type: ignore[assignment]  # processed: SimPy's own step() marks it so
        for callback in callbacks:
            callback(event)
        if not event._ok and not hasattr(event, "_defused"):
            _raise_failure(event)
