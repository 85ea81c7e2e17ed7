"""The event loop a simulation runs on: SimPy's ``Environment.run(until=t)``, with its step inlined.

SimPy's loop schedules a stop event at ``until`` (urgent priority, so it precedes the ordinary events
of that instant), then calls ``Environment.step()`` once per event until the stop event's callback
raises. :func:`run_until` schedules the same stop event and processes the same events in the same order
(time, then priority, then scheduling order) with the same semantics (each event's callbacks are called
once, in order, with the event; a failed event nobody defused stops the run with its exception), in one
Python frame, and stops when it pops the stop event: it is the kernel's hot loop, and spares a method
call and a ``try`` per event. An IO on a path may be in the queue itself rather than an event (its
stage gave the time it completes there: :class:`~storagelab.kernel.composition._PathIO`); the loop then
moves it on to its next stage, as the stage's event's one callback would have, and
:class:`~storagelab.kernel.simulation.Environment`'s ``step`` does the same for SimPy's own ``run``. The stop event also matters to components: it is always in the queue, so
an open-loop source that takes an arrival inline only when it precedes every scheduled event never
runs past ``until``.

While it runs, the cyclic garbage collector is off (``gc.disable()``, restored when it returns). A run
allocates an object or more per event, which would trigger collections, and each full one walks every
object the process holds (the imported libraries, a notebook's frames); but the kernel's per-IO objects
form no reference cycles, so reference counting frees them and the collections find nothing (a test
checks that the cyclic garbage a run leaves does not grow with its length). What a run does leave in
cycles (its components' set-up) is collected after it, as before.
"""

from __future__ import annotations

import gc
from heapq import heappop, heappush

import simpy
from simpy.events import URGENT, Event

from storagelab.kernel.composition import _PathIO


def run_until(env: simpy.Environment, until: float) -> None:
    """Process the events of ``env`` up to ``until`` (s), as ``env.run(until=until)`` does."""
    if not until > env._now:
        raise ValueError(f"until ({until}) must be greater than the current simulation time ({env._now})")
    enabled = gc.isenabled()  # a caller that turned the collector off keeps it off
    gc.disable()
    try:
        _run_until(env, until)
    finally:
        if enabled:
            gc.enable()


def _run_until(env: simpy.Environment, until: float) -> None:
    queue = env._queue
    stop = Event(env)
    stop._ok, stop._value = True, None
    heappush(queue, (until, URGENT, next(env._eid), stop))
    while True:
        env._now, _, _, event = heappop(queue)
        if event is stop:
            return
        if type(event) is _PathIO:  # a path's IO woken at its stage's completion time: it moves on
            woken: _PathIO = event
            woken(None)
            continue
        callbacks, event.callbacks = event.callbacks, None  # type: ignore[assignment]  # processed: SimPy's own step() marks it so
        for callback in callbacks:
            callback(event)
        if not event._ok and not hasattr(event, "_defused"):
            # as SimPy does: a copy of the failure with the original as its cause
            exc = type(event._value)(*event._value.args)
            exc.__cause__ = event._value
            raise exc
