"""Per-volume service levels as NexGen (later Pivot3) arrays define them: each volume has a policy with
a minimum IOPS, a minimum bandwidth and a not-to-exceed latency, and the array serves first the volumes
furthest below their targets.

NexGen's scheduler is not published; the study (``000_95d1997ae9f905ef.txt``, Figure 2) gives the
policies and says the QoS engine "manage[s] I/O prioritization for all three service levels". This
module implements that contract with one tag per request, a deadline that combines the three targets:

- a request of ``size`` bytes arriving at ``t`` for a volume whose previous request had tag ``D_prev``
  gets ``D = max(D_prev + max(1 / min_iops, size / min_bandwidth), t + max_latency)``: the later of the
  time its minimum rate owes it service (the minimum IOPS or the minimum bandwidth, whichever asks for
  more) and the time its latency target runs out. A volume that was idle starts again from
  ``t + max_latency`` (the ``max``): it cannot claim service for the time it was idle.
- **contention** (some waiting head's tag is due, ``D <= now``: a volume is below a target): a server
  that frees up serves the most critical service level that has a request waiting (``priority`` 1
  before 2 before 3: "each QoS policy has a corresponding service level that governs how it is
  prioritized when the system is under contention", as Pivot3, which acquired NexGen, describes it),
  and within the level the smallest tag: the volume furthest below its targets;
- **ahead** (nothing due; the station is work-conserving): the smallest tag of any level, and the served
  volume's waiting tags move back by what the request cost it (``1 / min_iops`` or ``size /
  min_bandwidth``, but never before their own latency deadlines), as mClock credits weight-phase
  service, so a volume that used spare capacity is not pushed behind the others later (Virtual Clock's
  flaw).

What that gives (``tests/test_service_levels.py`` checks each over sliding windows):

1. **minimum floor**: when the volumes' minimums sum to at most what the station can serve, a volume
   that keeps at least ``min_iops x max_latency`` requests outstanding (Little's law: what it takes to use
   its minimum within its target) gets at least ``min_iops x T`` requests, less one, in any window ``T >=
   1 / min_iops`` once its first deadline has passed;
2. **latency target**: under a load the station can carry, a volume's waits stay within its
   ``max_latency`` plus one service time, while a volume with a looser target absorbs the queueing;
3. **oversubscribed minimums** (the sum exceeds the capacity; every volume backlogged): no minimum can
   hold, every volume is served below it, its rate tags fall behind the clock and its latency deadlines
   decide: all volumes end up late by the same amount past their targets (earliest deadline first
   minimises the largest lateness) within a service level, so a volume with ``N`` outstanding gets ``N /
   (max_latency + lateness)`` IO/s; across levels, the more critical level is served first and a less
   critical one gets what is left, possibly nothing. That is how a policy table sized for a bigger array
   degrades (the NexGen table's minimums sum to 247,500 IOPS);
4. **no hoarding**: a volume back from idle gets no catch-up for the idle time;
5. **determinism**.

The study's policies impose no maximum. A level may carry one (``max_iops``, ``max_bandwidth``: a cap
as hypervisors and later arrays offer it): a volume's requests are then dispatched at least ``max(1 /
max_iops, size / max_bandwidth)`` apart, spaced from each dispatch, so a volume served late cannot
catch up in a burst above its cap; the station idles (the kernel's hold-back hook) until
:meth:`ServiceLevels.next_eligible`, the exact time a capped head may go. That gives

6. **hard limit**: in any window ``T`` a capped volume is served at most ``max_iops x T + 1``
   requests (at most ``max_bandwidth x T`` bytes plus one request), whatever the load.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from storagelab.kernel.disciplines import Discipline, Job
from storagelab.kernel.io import IORequest

INF = float("inf")


@dataclass(frozen=True)
class ServiceLevel:
    """A volume's QoS policy: ``min_iops`` (IO/s), ``min_bandwidth`` (bytes/s) and ``max_latency`` (s),
    with the policy's name and service level (e.g. ``"Policy 1"``, ``"Mission-critical"``) and the
    level's ``priority`` under contention (1 is served first). ``max_iops`` (IO/s) and
    ``max_bandwidth`` (bytes/s) cap the volume (default: no cap, as in the study's policies)."""

    min_iops: float
    min_bandwidth: float
    max_latency: float
    name: str = ""
    level: str = ""
    priority: int = 1
    max_iops: float = INF
    max_bandwidth: float = INF

    def __post_init__(self) -> None:
        if not (self.min_iops > 0 and self.min_bandwidth > 0 and self.max_latency > 0):
            raise ValueError(
                f"service level {self.name or self}: min_iops (IO/s), min_bandwidth (bytes/s) and max_latency (s) "
                f"must all be > 0, got {self.min_iops!r}, {self.min_bandwidth!r}, {self.max_latency!r}"
            )
        if not (self.max_iops > 0 and self.max_bandwidth > 0):
            raise ValueError(
                f"service level {self.name or self}: max_iops (IO/s) and max_bandwidth (bytes/s) must be > 0 "
                f"(inf = no cap), got {self.max_iops!r}, {self.max_bandwidth!r}"
            )

    @property
    def capped(self) -> bool:
        """Whether the level caps its volume (a finite ``max_iops`` or ``max_bandwidth``)."""
        return self.max_iops < INF or self.max_bandwidth < INF

    def spacing(self, size: int) -> float:
        """Seconds a capped volume waits after dispatching a request of ``size`` bytes before the
        next may go: the larger of ``1 / max_iops`` and ``size / max_bandwidth`` (0 without a cap)."""
        return max(1.0 / self.max_iops, size / self.max_bandwidth)

    def cost(self, size: int) -> float:
        """Seconds of this volume's minimum rate one request of ``size`` bytes uses: the larger of
        ``1 / min_iops`` and ``size / min_bandwidth``."""
        return max(1.0 / self.min_iops, size / self.min_bandwidth)


class _Volume:
    __slots__ = ("allowed", "last", "level", "queue")

    def __init__(self, level: ServiceLevel) -> None:
        self.level = level
        self.queue: deque[list] = deque()  # [tag, cost, seq, job, latency deadline]
        self.last = -INF
        self.allowed = -INF  # a capped volume's next request may not go before this time (s)


class ServiceLevels(Discipline):
    """Serve the volume furthest below its targets (see the module docstring). ``levels`` maps an IO
    class (the workload or volume name an IO carries as ``cls``) to its :class:`ServiceLevel`; IOs of
    other classes get ``default``, or, when it is ``None``, are refused with an error naming the class.
    ``key`` names the volume an IO belongs to (default: its ``cls``; an array keys by LUN, e.g.
    ``lambda io: luns[io.volume]`` behind :class:`~storagelab.components.extent.Lun`).
    ``record`` keeps the dispatch log (time, volume, wait in s, phase)."""

    def __init__(
        self,
        levels: Mapping[str, ServiceLevel],
        *,
        default: ServiceLevel | None = None,
        record: bool = False,
        key: Callable[[IORequest], str] | None = None,
    ) -> None:
        self.levels = dict(levels)
        self.default, self.record = default, record
        self.key = key
        self._reset()

    def _reset(self) -> None:
        self.volumes: dict[str, _Volume] = {}
        self._seq = itertools.count()
        self._waiting = 0
        self.log: list[tuple[float, str, float, str]] = []

    def bind(self, station) -> None:
        super().bind(station)
        self._reset()

    def _volume(self, cls: str) -> _Volume:
        v = self.volumes.get(cls)
        if v is None:
            level = self.levels.get(cls, self.default)
            if level is None:
                known = ", ".join(sorted(self.levels)) or "none"
                raise ValueError(
                    f"service levels: no policy for IO class {cls!r} (policies for: {known}) and no default"
                )
            v = self.volumes[cls] = _Volume(level)
        return v

    def push(self, job: Job, now: float) -> None:
        io = job[0]
        v = self._volume(io.cls if self.key is None else self.key(io))
        c = v.level.cost(io.size)
        deadline = now + v.level.max_latency
        tag = max(v.last + c, deadline)
        v.last = tag
        v.queue.append([tag, c, next(self._seq), job, deadline])
        self._waiting += 1

    def pop(self, now: float) -> Job | None:
        if not self._waiting:
            return None
        heads = [v for v in self.volumes.values() if v.queue and v.allowed <= now]
        if not heads:  # every waiting volume is at its cap: the station idles until next_eligible
            return None
        if any(v.queue[0][0] <= now for v in heads):  # contention: the most critical level first
            best = min(heads, key=lambda v: (v.level.priority, v.queue[0][0], v.queue[0][2]))
        else:
            best = min(heads, key=lambda v: (v.queue[0][0], v.queue[0][2]))
        tag, c, _s, job, _deadline = best.queue.popleft()
        self._waiting -= 1
        if best.level.capped:
            best.allowed = now + best.level.spacing(job[0].size)
        phase = "due" if tag <= now else "ahead"
        if phase == "ahead":  # served early on spare capacity: do not push its later tags ahead
            for entry in best.queue:
                entry[0] = max(entry[0] - c, entry[4])  # never before its own latency deadline
            best.last -= c
        if self.record:
            io = job[0]
            self.log.append((now, io.cls if self.key is None else self.key(io), now - job[2], phase))
        return job

    def next_eligible(self, now: float) -> float | None:
        """When every waiting volume is at its cap: the earliest time one of them may go again."""
        times = [v.allowed for v in self.volumes.values() if v.queue]
        return min(times) if times else None

    def __len__(self) -> int:
        return self._waiting
