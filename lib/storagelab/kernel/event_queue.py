"""The event queue of a run (its future event list): what is scheduled, in the order it happens.

An entry is an item (a SimPy event, a :class:`~storagelab.kernel.component.Signal`, or an IO on a path
woken at its stage's completion time) at a simulated time (s) with a priority (SimPy's: ``URGENT`` 0
before ``NORMAL`` 1 at the same time; -1 for an event put back by a stopped ``step``). Entries leave in
SimPy's order: by time, then priority, then the order they were scheduled in. That is a total order (no
two entries were scheduled at once), so any correct heap pops them in the same sequence and a run gives
the same results whichever queue it uses.

:class:`EventQueue` is a binary heap of native entries, comparing a time and one integer key
(``priority x 2**40 + scheduling number``, the pair's order for up to 2**40 entries a run, and a run
that would schedule more is stopped with an :class:`EventQueueFull` error rather than left to pop in the
wrong order; :class:`TupleEventQueue` stops at the same count, so both queues run the same): compiled
(:mod:`storagelab.kernel.native`), a push and a pop then cost no Python comparison, tuple or boolean
object, where ``heapq`` on ``(time, priority, number, item)`` tuples calls the tuples' and the floats'
rich comparisons at every step of each sift. Interpreted, the same loops are slower than ``heapq``'s C
ones, so a run that is not compiled uses :class:`TupleEventQueue`, ``heapq`` on those tuples, with the
same methods (:func:`new_event_queue` picks).
"""

from __future__ import annotations

import heapq
import math
from typing import Any, Final, final

from mypy_extensions import mypyc_attr

#: The span of scheduling numbers one priority's keys hold (priority x SPAN + number).
SPAN: Final = 1 << 40

#: The most entries one run may schedule: past it a key would no longer order (priority, number).
LIMIT: Final = SPAN


@mypyc_attr(native_class=False)  # compiled code cannot subclass a built-in exception natively
class EventQueueFull(RuntimeError):
    """A run scheduled :data:`LIMIT` (2**40) entries, beyond which the event queue's keys no longer keep
    SimPy's order (the next number would tie with an entry of the next priority)."""


def _full(scheduled: int) -> EventQueueFull:
    return EventQueueFull(
        f"event queue: {scheduled:,} entries scheduled in this run, the most its keys order (2**40 = "
        f"{LIMIT:,}); split the run (a shorter duration, or fewer events per IO)"
    )


#: Whether this module runs compiled (its file is then the extension module, not the ``.py`` source).
COMPILED: Final = not __file__.endswith(".py")


@final
class _Entry:
    """One scheduled item: its ``time`` (s), its ``key`` (priority x :data:`SPAN` + scheduling number)."""

    __slots__ = ("item", "key", "time")

    def __init__(self, time: float, key: int, item: Any) -> None:
        self.time = time
        self.key = key
        self.item = item


class EventQueue:
    """The entries scheduled and not yet popped, a binary heap ordered by time, then priority, then
    scheduling order. ``scheduled``: how many entries were ever pushed; ``time``: the time (s) of the entry
    the last :meth:`pop` returned."""

    def __init__(self) -> None:
        self._heap: list[_Entry] = []
        self.scheduled = 0
        self.time = 0.0

    def push(self, time: float, priority: int, item: Any) -> None:
        """Schedule ``item`` at ``time`` (s) with ``priority`` (lower first at one time)."""
        n = self.scheduled
        if n >= LIMIT:
            raise _full(n)
        key = priority * SPAN + n
        self.scheduled = n + 1
        entry = _Entry(time, key, item)
        heap = self._heap
        heap.append(entry)
        self._settle(entry, len(heap) - 1)

    def pop(self) -> Any:
        """Remove the earliest entry and return its item (its time is then :attr:`time`); raises
        ``IndexError`` when the queue is empty."""
        heap = self._heap
        last = heap.pop()
        n = len(heap)
        if n == 0:
            self.time = last.time
            return last.item
        top = heap[0]
        # as heapq does: the smaller child moves up into the hole down to a leaf, then the last entry goes
        # into that leaf and up while its parent is later (fewer comparisons than sifting it down)
        pos = 0
        child = 1
        while child < n:
            c = heap[child]
            right = child + 1
            if right < n:
                r = heap[right]
                if r.time < c.time or (r.time == c.time and r.key < c.key):
                    child = right
                    c = r
            heap[pos] = c
            pos = child
            child = 2 * pos + 1
        self._settle(last, pos)
        self.time = top.time
        return top.item

    def _settle(self, entry: _Entry, pos: int) -> None:
        """Put ``entry`` in the heap at ``pos`` (a leaf, or the hole a pop left there) or above it, moving
        each later parent down a level."""
        heap = self._heap
        t, k = entry.time, entry.key
        while pos > 0:
            up = (pos - 1) >> 1
            parent = heap[up]
            if t < parent.time or (t == parent.time and k < parent.key):
                heap[pos] = parent
                pos = up
            else:
                break
        heap[pos] = entry

    def first(self) -> float:
        """The time (s) of the earliest entry; infinity when the queue is empty."""
        heap = self._heap
        return heap[0].time if len(heap) > 0 else math.inf

    def empty(self) -> bool:
        """Whether no entry is scheduled."""
        return len(self._heap) == 0

    def __len__(self) -> int:
        return len(self._heap)


class TupleEventQueue(EventQueue):
    """:class:`EventQueue` as ``heapq`` on ``(time, priority, scheduling number, item)`` tuples: the same
    order, faster where the queue is not compiled."""

    def __init__(self) -> None:
        super().__init__()
        self._tuples: list[tuple[float, int, int, Any]] = []

    def push(self, time: float, priority: int, item: Any) -> None:
        n = self.scheduled
        if n >= LIMIT:
            raise _full(n)
        self.scheduled = n + 1
        heapq.heappush(self._tuples, (time, priority, n, item))

    def pop(self) -> Any:
        time, _, _, item = heapq.heappop(self._tuples)
        self.time = time
        return item

    def first(self) -> float:
        return self._tuples[0][0] if self._tuples else math.inf

    def empty(self) -> bool:
        return not self._tuples

    def __len__(self) -> int:
        return len(self._tuples)


def new_event_queue() -> EventQueue:
    """An empty event queue: the native heap where this module is compiled, ``heapq`` on tuples where not."""
    return EventQueue() if COMPILED else TupleEventQueue()
