"""Guards against a run that cannot end: a user's bound on the events a simulation processes and on the
wall-clock seconds it (or a whole search) may take.

A simulation with a finite duration can still never end in practice: an open source whose arrival rate
exceeds what the system serves piles up a queue that grows without bound (each simulated second costs more
than the last), and a loop of zero-time events never advances the clock at all. :func:`~storagelab.simulate`
takes ``max_events`` and ``max_wall_s``; :func:`run_limits` sets them for every simulation run inside a
``with`` block (a headroom search, a comparison, a sweep's scenario function), the wall-clock limit then
counting from the block's start, so it bounds the whole search. When a limit is reached the run stops
with :class:`RunLimitReached`, naming the limit and how far the run got.

The event loop checks its count and the clock once every :data:`CHECK_EVERY` events (a countdown in a
local variable), so a guarded run costs about what an unguarded one does. An open source's arrivals taken
inline between events count as part of the event before them; in a run with limits at most
:data:`INLINE_ARRIVALS` are, so ``max_events`` bounds the arrivals too (to that many per event).
"""

from __future__ import annotations

import contextvars
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


class RunLimitReached(RuntimeError):
    """A run stopped at a limit its user gave (``max_events`` or ``max_wall_s``); the message names the
    limit and how far the run got (simulated time, events processed, wall-clock seconds)."""


@dataclass(frozen=True)
class RunLimits:
    """The limits a run is held to: ``max_events`` events processed (None: no bound) and ``deadline``, a
    ``time.perf_counter()`` instant (``inf``: none), with the ``max_wall_s`` it was set from (for
    messages)."""

    max_events: int | None = None
    deadline: float = math.inf
    max_wall_s: float | None = None

    def tighter(self, other: RunLimits) -> RunLimits:
        """The stricter of each limit of ``self`` and ``other``."""
        events = [n for n in (self.max_events, other.max_events) if n is not None]
        first = self if self.deadline <= other.deadline else other
        return RunLimits(min(events) if events else None, first.deadline, first.max_wall_s)


#: No limits: what a run outside every run_limits block is held to.
NO_LIMITS = RunLimits()
_ACTIVE: contextvars.ContextVar[RunLimits] = contextvars.ContextVar(
    "storagelab_run_limits", default=NO_LIMITS
)


def check_limits(max_events: int | None, max_wall_s: float | None) -> None:
    """Refuse limits that are not a whole number of events >= 1 or a positive, finite number of seconds."""
    if max_events is not None and (
        isinstance(max_events, bool) or not isinstance(max_events, int) or max_events < 1
    ):
        raise ValueError(f"max_events must be a whole number >= 1 (events), got {max_events!r}")
    if max_wall_s is not None and (
        isinstance(max_wall_s, bool)
        or not isinstance(max_wall_s, int | float)
        or not (math.isfinite(max_wall_s) and max_wall_s > 0)
    ):
        raise ValueError(f"max_wall_s must be a finite number of seconds > 0, got {max_wall_s!r}")


def limits_for(max_events: int | None = None, max_wall_s: float | None = None) -> RunLimits:
    """The limits a run started now is held to: those given (the wall clock counting from now) and those
    of every enclosing :func:`run_limits` block, the stricter of each."""
    check_limits(max_events, max_wall_s)
    own = RunLimits(
        max_events,
        time.perf_counter() + max_wall_s if max_wall_s is not None else math.inf,
        max_wall_s,
    )
    return own.tighter(_ACTIVE.get())


@contextmanager
def run_limits(max_events: int | None = None, max_wall_s: float | None = None) -> Iterator[RunLimits]:
    """Hold every simulation run inside the block to ``max_events`` events each and all of them together
    to ``max_wall_s`` wall-clock seconds from the block's start (None: no limit); nested blocks keep the
    stricter. A run that reaches a limit raises :class:`RunLimitReached`."""
    limits = limits_for(max_events, max_wall_s)
    token = _ACTIVE.set(limits)
    try:
        yield limits
    finally:
        _ACTIVE.reset(token)


def reached(limits: RunLimits, events: int, now: float, until: float, what: str) -> RunLimitReached:
    """The error for a run of ``what`` stopped at a limit after ``events`` events, at simulated time
    ``now`` of ``until`` (s)."""
    if limits.max_events is not None and events >= limits.max_events:
        which = f"the event limit max_events={limits.max_events:,}"
    else:
        which = f"the wall-clock limit max_wall_s={limits.max_wall_s:g} s"
    return RunLimitReached(
        f"{what} stopped at {which}: it had processed {events:,} events and reached simulated time "
        f"{now:.6g} s of {until:.6g} s ({100 * now / until if until > 0 else 0:.3g} %); the system may be "
        "overloaded (a queue growing without bound) or looping at one instant. Shorten the run, lower the "
        "load, or raise the limit."
    )


#: Events processed between two checks of the limits (a check reads the clock).
CHECK_EVERY = 4096

#: In a run with limits, the arrivals an open source takes inline (nothing scheduled before them) before it
#: schedules the next as an event, handing control back to the loop: the work between two events stays
#: bounded (in a run without limits the chain is unbounded, as before; the results are the same either way).
INLINE_ARRIVALS = 16

__all__ = [
    "CHECK_EVERY",
    "INLINE_ARRIVALS",
    "RunLimitReached",
    "RunLimits",
    "check_limits",
    "limits_for",
    "run_limits",
]
