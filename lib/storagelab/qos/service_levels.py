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
- **ahead** (nothing due; the station is work-conserving): spare capacity, given out one of two ways
  (``spare``):

  - ``"deadline"`` (the default): the smallest tag of any level, so a volume with a tight latency
    target goes before its deadline rather than at it;
  - ``"weight"``: by weight. Each volume has a weight tag that every request it is served advances by
    ``cost x min_iops / weight`` (in either phase; ``cost x min_iops`` is 1 for a request whose IOPS
    minimum binds), and the head with the smallest tag after its request goes (start-time fair
    queuing, Goyal, Vin and Cheng, SIGCOMM 1996, with finish tags). A volume that becomes backlogged
    starts from the smallest tag of those waiting (or the last one served): no credit for time idle,
    as mClock's idle-tenant adjustment. The weight defaults to the level's minimum IOPS: spare
    capacity in proportion to the minimums.

  Either way the served volume's tags move back by what the request cost it (``1 / min_iops`` or
  ``size / min_bandwidth``, but never before their own latency deadlines), as mClock credits
  weight-phase service, so a volume that used spare capacity is not pushed behind the others later
  (Virtual Clock's flaw). NexGen does not say how its arrays give out spare capacity. The two ways
  trade against each other: by weight, a volume
  whose weight share is below what its deadline needs waits until its requests are due and then
  queues behind its own due requests, so its latency target no longer holds near saturation; by
  deadline, spare capacity follows the deadlines, not the weights.

What that gives (``tests/test_qos_conformance.py`` checks the floor and the caps over exact windows
aligned on dispatches, ``tests/test_service_levels.py`` the rest). The study promises per volume a
"guaranteed minimum IOPS, throughput, and not-to-exceed latency" (``000_95d1997ae9f905ef.txt``, section
"Storage QoS": "QoS policies ... define minimum IOPS, throughput and maximum latency for each
application"), and says over what window it holds nowhere; the windows below are this model's:

1. **minimum floor**: when the volumes are of one service level (``priority``) and their minimums sum to
   at most what the station can serve, a volume that keeps ``N`` requests outstanding, at least
   ``min_iops x (max_latency + 2 s)`` of them (``s``: the longest service time; Little's law at a wait of
   its target plus the one service time the latency target allows, and its own service), gets at least
   ``min_iops x T - N`` requests in any window ``T`` once its first deadlines have passed. Not ``min_iops x
   T - 1``: a volume's tags are the later of its rate tag and its latency deadline, and spare capacity
   given to it early moves its tags back to those deadlines, so its dispatches follow its requests'
   arrivals, which come in bunches of up to ``N``: minimums of 250 and 250 IOPS, targets of 5 and 50 ms,
   2 and 13 requests outstanding leave the 50 ms volume 23 ms without a dispatch (its own ``min_iops x
   max_latency`` = 12.5 outstanding, the condition stated before, was met) while it gets 273 IOPS on
   average. ``min_iops x T - N`` is checked on generated volumes (``tests/test_service_levels.py``), not
   proven here. Across service levels the more critical level goes first under contention, so a less
   critical volume's floor also needs the more critical levels to leave it its minimum (two volumes of
   500 IOPS at 2 ms on a 1,000 IOPS station, 2 and 1 outstanding, levels 1 and 2: the level-2 volume
   gets nothing);
2. **latency target** (``spare="deadline"``): under a load the station can carry, a volume's waits stay
   within its ``max_latency`` plus one service time, while a volume with a looser target absorbs the
   queueing;
3. **oversubscribed minimums** (the sum exceeds the capacity; every volume backlogged): no minimum can
   hold, every volume is served below it, its rate tags fall behind the clock and its latency deadlines
   decide: all volumes end up late by the same amount past their targets (earliest deadline first
   minimises the largest lateness) within a service level, so a volume with ``N`` outstanding gets ``N /
   (max_latency + lateness)`` IO/s; across levels, the more critical level is served first and a less
   critical one gets what is left, possibly nothing. That is how a policy table sized for a bigger array
   degrades (the NexGen table's minimums sum to 247,500 IOPS);
4. **no hoarding**: a volume back from idle gets no catch-up for the idle time;
5. **determinism**;
6. **weight share** (``spare="weight"``): volumes that are backlogged but within their targets (none
   due) share the station in proportion to their weights, and a volume whose minimum is above its
   weight share gets its minimum, not the minimum plus a share (the weight tag counts service in both
   phases), so the others share what is left.

The study's policies impose no maximum. A level may carry one (``max_iops``, ``max_bandwidth``: a cap
as hypervisors and later arrays offer it): a volume's requests are then dispatched at least ``max(1 /
max_iops, size / max_bandwidth)`` apart, spaced from each dispatch, so a volume served late cannot
catch up in a burst above its cap; the station idles (the kernel's hold-back hook) until
:meth:`ServiceLevels.next_eligible`, the exact time a capped head may go. That gives

7. **hard limit**: in any window ``T`` a capped volume is served at most ``max_iops x T + 1``
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
    ``max_bandwidth`` (bytes/s) cap the volume (default: no cap, as in the study's policies).
    ``weight``: the volume's share of spare capacity when the scheduler gives it out by weight
    (default: ``min_iops``)."""

    min_iops: float
    min_bandwidth: float
    max_latency: float
    name: str = ""
    level: str = ""
    priority: int = 1
    max_iops: float = INF
    max_bandwidth: float = INF
    weight: float | None = None

    def __post_init__(self) -> None:
        if not (self.min_iops > 0 and self.min_bandwidth > 0 and self.max_latency > 0):
            raise ValueError(
                f"service level {self.name or self}: min_iops (IO/s), min_bandwidth (bytes/s) and max_latency (s) "
                f"must all be > 0, got {self.min_iops!r}, {self.min_bandwidth!r}, {self.max_latency!r}"
            )
        if self.weight is not None and not self.weight > 0:
            raise ValueError(
                f"service level {self.name or self}: weight must be > 0 (None: min_iops), got {self.weight!r}"
            )
        if not (self.max_iops > 0 and self.max_bandwidth > 0):
            raise ValueError(
                f"service level {self.name or self}: max_iops (IO/s) and max_bandwidth (bytes/s) must be > 0 "
                f"(inf = no cap), got {self.max_iops!r}, {self.max_bandwidth!r}"
            )

    @property
    def share_weight(self) -> float:
        """The volume's weight for spare capacity: ``weight``, or ``min_iops`` when none is set."""
        return self.min_iops if self.weight is None else self.weight

    def share_cost(self, size: int) -> float:
        """How far one request of ``size`` bytes moves the volume's weight tag: its cost in requests at
        the minimum rate (1 when the IOPS minimum binds) over the weight."""
        return self.cost(size) * self.min_iops / self.share_weight

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
    __slots__ = ("allowed", "credit", "last", "level", "queue", "share")

    def __init__(self, level: ServiceLevel) -> None:
        self.level = level
        self.queue: deque[list] = deque()  # [tag, cost, seq, job, latency deadline, credit at push]
        self.credit = 0.0  # cost of the requests served ahead so far (s): what the tags have moved back
        self.last = -INF
        self.allowed = -INF  # a capped volume's next request may not go before this time (s)
        self.share = 0.0  # weight tag: where its next request starts (requests at the minimum rate / weight)


class ServiceLevels(Discipline):
    """Serve the volume furthest below its targets (see the module docstring). ``levels`` maps an IO
    class (the workload or volume name an IO carries as ``cls``) to its :class:`ServiceLevel`; IOs of
    other classes get ``default``, or, when it is ``None``, are refused with an error naming the class.
    ``key`` names the volume an IO belongs to (default: its ``cls``; an array keys by LUN, e.g.
    ``lambda io: luns[io.volume]`` behind :class:`~storagelab.components.extent.Lun`).
    ``record`` keeps the dispatch log (time, volume, wait in s, phase). ``spare``: how capacity left
    when no volume is due is given out, ``"deadline"`` or ``"weight"`` (see the module docstring)."""

    def __init__(
        self,
        levels: Mapping[str, ServiceLevel],
        *,
        default: ServiceLevel | None = None,
        record: bool = False,
        key: Callable[[IORequest], str] | None = None,
        spare: str = "deadline",
    ) -> None:
        if spare not in ("deadline", "weight"):
            raise ValueError(f"service levels: spare must be 'deadline' or 'weight', got {spare!r}")
        self.spare = spare
        self._by_weight = spare == "weight"
        self.levels = dict(levels)
        self.default, self.record = default, record
        self.key = key
        self._reset()

    def _reset(self) -> None:
        self.volumes: dict[str, _Volume] = {}
        self._seq = itertools.count()
        self._waiting = 0
        self._share_now = 0.0  # weight tag of the last request served (start-time fair queuing's clock)
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
        if self._by_weight and not v.queue:  # backlogged again: no credit for the time it was idle
            waiting = [u.share for u in self.volumes.values() if u.queue]
            v.share = max(v.share, min(waiting) if waiting else self._share_now)
        v.queue.append([tag, c, next(self._seq), job, deadline, v.credit])
        self._waiting += 1

    @staticmethod
    def _head_tag(v: _Volume) -> float:
        """The head request's tag now: its tag at push moved back by what the volume was credited since
        (requests served ahead), never before its own latency deadline. Moving every waiting tag back
        at each credit (as mClock does) gives the same tags, since ``max(max(t - a, d) - b, d) = max(t - a
        - b, d)``; doing it for the head only when it is read keeps a pop O(volumes), not O(waiting)."""
        head = v.queue[0]
        moved = v.credit - head[5]
        if moved:
            head[0] = tag = max(head[0] - moved, head[4])
            head[5] = v.credit
            return tag
        return head[0]

    def pop(self, now: float) -> Job | None:
        if not self._waiting:
            return None
        # one pass over the volumes with a request that may go now (not at a cap), each head's tag brought
        # up to date: the head first by tag, and by level priority then tag (taken when some tag is due:
        # contention, the most critical level first); sequence numbers break ties (they never repeat)
        head_tag = self._head_tag
        best = urgent = None
        best_key = urgent_key = None
        due, by_weight = False, self._by_weight
        heads: list[_Volume] = []  # for the choice by weight
        for v in self.volumes.values():
            if not v.queue or v.allowed > now:
                continue
            tag = head_tag(v)
            seq = v.queue[0][2]
            if tag <= now:
                due = True
            key = (tag, seq)
            if best is None or key < best_key:
                best, best_key = v, key
            key = (v.level.priority, tag, seq)
            if urgent is None or key < urgent_key:
                urgent, urgent_key = v, key
            if by_weight:
                heads.append(v)
        if best is None:  # every waiting volume is at its cap: the station idles until next_eligible
            return None
        if due:
            best = urgent
        elif by_weight:  # by weight: the smallest weight tag after the head's request
            best = min(
                heads, key=lambda v: (v.share + v.level.share_cost(v.queue[0][3][0].size), v.queue[0][2])
            )
        tag, c, _s, job, _deadline, _credit = best.queue.popleft()
        self._waiting -= 1
        if self._by_weight:
            self._share_now = best.share
            best.share += best.level.share_cost(job[0].size)
        if best.level.capped:
            best.allowed = now + best.level.spacing(job[0].size)
        phase = "due" if tag <= now else "ahead"
        if phase == "ahead":  # served early on spare capacity: do not push its later tags ahead
            best.credit += c  # every waiting tag moves back by c (see _head_tag)
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
