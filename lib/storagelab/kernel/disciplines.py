"""Queue disciplines: which waiting IO a station serves next.

A discipline holds the waiting jobs of a station. The station calls :meth:`Discipline.push` when an IO
must wait and :meth:`Discipline.pop` when a server frees up. ``pop`` may return ``None`` even when jobs
wait, meaning *none is eligible now* (a limit-based QoS scheduler such as mClock holds back a tenant
over its limit); the station then asks :meth:`Discipline.next_eligible` for the time to look again.
That is the hook later QoS schedulers (reservation / limit / shares; per-volume IOPS, bandwidth and
latency targets) plug into without changing the station.

A job is a list ``[io, event, arrival_time]``.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from typing import TYPE_CHECKING, Any, ClassVar

from mypy_extensions import mypyc_attr

from storagelab.kernel.io import IORequest

if TYPE_CHECKING:
    from storagelab.kernel.station import Station

Job = list


@mypyc_attr(allow_interpreted_subclasses=True)  # subclassed by modules not compiled (QoS schedulers)
class Discipline:
    """Base class: a container of waiting jobs with a service order."""

    #: True when jobs are served strictly in arrival order (lets a station take the FIFO fast path).
    fifo: ClassVar[bool] = False

    def bind(self, station: Station) -> None:
        """Called once when the station is bound to a run (gives access to its device, if any)."""
        self.station = station

    def push(self, job: Job, now: float) -> None:
        raise NotImplementedError

    def pop(self, now: float) -> Job | None:
        raise NotImplementedError

    def next_eligible(self, now: float) -> float | None:
        """When ``pop`` returned ``None`` with jobs waiting: the earliest time one becomes eligible."""
        return None

    def __len__(self) -> int:
        raise NotImplementedError


@mypyc_attr(allow_interpreted_subclasses=True)
class FIFO(Discipline):
    """First come, first served."""

    fifo: ClassVar[bool] = True

    def __init__(self) -> None:
        self._q: deque[Job] = deque()

    def push(self, job: Job, now: float) -> None:
        self._q.append(job)

    def pop(self, now: float) -> Job | None:
        return self._q.popleft() if self._q else None

    def __len__(self) -> int:
        return len(self._q)


class PriorityByClass(Discipline):
    """Non-preemptive priority: lower rank first, FIFO within a rank.

    ``ranks`` maps an IO class to its rank (0 = highest); classes not listed use ``io.priority``.
    """

    def __init__(self, ranks: dict[str, int] | None = None) -> None:
        self.ranks = dict(ranks or {})
        self._heap: list[tuple[int, int, Job]] = []
        self._seq = itertools.count()

    def push(self, job: Job, now: float) -> None:
        io: IORequest = job[0]
        rank = self.ranks.get(io.cls, io.priority)
        heapq.heappush(self._heap, (rank, next(self._seq), job))

    def pop(self, now: float) -> Job | None:
        return heapq.heappop(self._heap)[2] if self._heap else None

    def __len__(self) -> int:
        return len(self._heap)


class _DeviceWindow(Discipline):
    """Common part of the disk schedulers: a device-side window of ``depth`` commands (NCQ/TCQ), with
    command aging.

    Jobs beyond the window wait in arrival order; the scheduler reorders only within the window, as a
    drive with a command queue of ``depth`` does. **Aging**: a command that has waited ``max_age``
    seconds or more is served next, oldest first, so no command starves inside the window while
    commands near the head keep arriving (drive firmware ages queued commands for this reason; see
    e.g. US patent 6,848,020, "Command aging method for data storage devices"). Firmware limits are not
    published; the default ``max_age`` is the time a full window takes to drain in arrival order,
    ``depth`` x the device's mean 4 KiB random read time (device physics: a command then waits at
    most about as long as it would under FIFO). ``max_age=math.inf`` turns aging off (pure SSTF/LOOK,
    which can starve a far command).
    """

    def __init__(self, depth: int = 32, max_age: float | None = None) -> None:
        if not isinstance(depth, int) or depth < 1:
            raise ValueError(f"queue depth must be an integer >= 1, got {depth!r}")
        if max_age is not None and not max_age > 0:
            raise ValueError(f"max_age must be a positive number of seconds (or math.inf), got {max_age!r}")
        self.depth = depth
        self.max_age_setting = max_age
        self._q: list[Job] = []

    def bind(self, station: Station) -> None:
        super().bind(station)
        device: Any = station.service_source  # a disk model (checked here)
        if not hasattr(device, "seek_distance"):
            raise ValueError(
                f"{type(self).__name__} on station {station.name!r} needs a device with seek_distance(address) "
                f"(a disk model); got {type(device).__name__}"
            )
        self._distance = device.seek_distance
        self.max_age = (
            self.max_age_setting
            if self.max_age_setting is not None
            else self.depth * device.mean_service_time(True, 4096)
        )

    def _aged(self, now: float) -> Job | None:
        """The oldest waiting command if it has waited ``max_age`` or more (the list is in arrival order)."""
        q = self._q
        if now - q[0][2] >= self.max_age:
            return q.pop(0)
        return None

    def push(self, job: Job, now: float) -> None:
        self._q.append(job)

    def __len__(self) -> int:
        return len(self._q)


class ShortestSeekFirst(_DeviceWindow):
    """Shortest seek time first among the first ``depth`` waiting commands (with aging)."""

    def pop(self, now: float) -> Job | None:
        q = self._q
        if not q:
            return None
        if (job := self._aged(now)) is not None:
            return job
        dist = self._distance
        window = min(len(q), self.depth)
        best = min(range(window), key=lambda i: abs(dist(q[i][0].address)))
        return q.pop(best)


class Elevator(_DeviceWindow):
    """LOOK elevator: serve the nearest command ahead in the current sweep direction, then reverse (with
    aging)."""

    def __init__(self, depth: int = 32, max_age: float | None = None) -> None:
        super().__init__(depth, max_age)
        self._up = True

    def pop(self, now: float) -> Job | None:
        q = self._q
        if not q:
            return None
        if (job := self._aged(now)) is not None:
            return job
        dist = self._distance
        window = range(min(len(q), self.depth))
        for _ in range(2):
            ahead = [i for i in window if (d := dist(q[i][0].address)) == 0 or (d > 0) == self._up]
            if ahead:
                best = min(ahead, key=lambda i: abs(dist(q[i][0].address)))
                return q.pop(best)
            self._up = not self._up
        return q.pop(0)


class ShortestAccessFirst(_DeviceWindow):
    """Shortest access time first (rotational position ordering) among the first ``depth`` waiting
    commands, with aging: the command whose seek plus rotational latency, from where the head is now,
    is shortest. A drive with a command queue does this (Seltzer, Chen and Ousterhout, "Disk Scheduling
    Revisited", USENIX 1990; Jacobson and Wilkes, "Disk scheduling algorithms based on rotational
    position", HP Labs 1991): rotation costs as much as a seek, and a deep queue has a command close in
    both. Needs a disk model that can track its rotation (:meth:`storagelab.devices.HDD.track_rotation`),
    which binding turns on."""

    def bind(self, station: Station) -> None:
        super().bind(station)
        device: Any = station.service_source  # a disk model that tracks its rotation (checked here)
        if not hasattr(device, "track_rotation"):
            raise ValueError(
                f"ShortestAccessFirst on station {station.name!r} needs a disk model that tracks its "
                f"rotation (track_rotation, access_time); got {type(device).__name__}"
            )
        device.track_rotation(station.env)
        self._access = device.access_time
        # the drive's own loop over the window, when it has one (the same choice, one call per dispatch)
        self._shortest = getattr(device, "shortest_access", None)

    def pop(self, now: float) -> Job | None:
        q = self._q
        if not q:
            return None
        if (job := self._aged(now)) is not None:
            return job
        window = min(len(q), self.depth)
        if self._shortest is not None:
            return q.pop(self._shortest(q, window, now))
        access = self._access
        best = min(range(window), key=lambda i: access(q[i][0].is_read, q[i][0].address, now))
        return q.pop(best)


DISCIPLINES = {
    "fifo": FIFO, "priority": PriorityByClass, "sstf": ShortestSeekFirst, "elevator": Elevator,
    "satf": ShortestAccessFirst,
}  # fmt: skip


def make_discipline(spec: str | Discipline | None) -> Discipline:
    """A discipline from an instance or a name (``fifo``, ``priority``, ``sstf``, ``elevator``, ``satf``)."""
    if spec is None:
        return FIFO()
    if isinstance(spec, Discipline):
        return spec
    try:
        return DISCIPLINES[spec]()
    except (KeyError, TypeError):
        raise ValueError(f"unknown queue discipline {spec!r}; known: {', '.join(DISCIPLINES)}") from None
