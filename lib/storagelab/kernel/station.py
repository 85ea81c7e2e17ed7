"""A service station: ``servers`` identical servers in front of a queue with a pluggable discipline.

Two paths, chosen when the station is bound:

- **fast path** (FIFO discipline and a state-independent service source): the completion time is
  computed when the IO arrives, from the earliest time a server is free (the servers' free times are
  kept in a heap), and a single event is scheduled for it. Exact for FIFO, because a job's start
  depends only on the jobs before it.
- **general path** (reordering disciplines, or devices whose service time depends on state such as
  a disk head's position): jobs wait in the discipline; service time is drawn when service starts;
  each completion frees a server and starts the next eligible job.

Statistics cover the measurement window exactly: an IO counts as completed when its completion time
has passed (on the fast path, completion times wait in a list, counted when statistics are asked for or
the list grows long: an append per IO, where a heap kept in order costs a push and a pop), and
utilisation counts only the service that falls inside the window. Mean number waiting follows from
Little's law: total waiting time / elapsed time (waits of IOs completed in the window; on the fast path,
of IOs accepted in it, which differ only by the few IOs in flight at the window's ends).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from functools import partial

import numpy as np
from mypy_extensions import mypyc_attr

from storagelab.kernel.component import (
    NORMAL_PRIORITY,
    Component,
    EventLike,
    Signal,
    completion_in,
    heapreplace,
)
from storagelab.kernel.disciplines import Discipline, make_discipline
from storagelab.kernel.io import IORequest
from storagelab.kernel.service import CarriedTime, ServiceDistribution

#: The fewest completion times a fast-path station holds before counting those that have passed.
_COUNT_AT = 4096


def io_service(source: object, rng: np.random.Generator) -> tuple[Callable[[IORequest], float], bool]:
    """Adapt a service source to ``f(io) -> seconds``, what a station calls per IO (here, with the station,
    so that it is compiled with it: :mod:`storagelab.kernel.native`); also say whether it depends on state.

    Returns ``(f, state_dependent)``. Distributions ignore the IO; device models see its op, size and
    address.
    """
    if isinstance(source, ServiceDistribution):
        draw = source.sampler(rng)
        return (lambda io: draw()), False
    if hasattr(source, "service_time"):
        st = source.service_time
        return (lambda io: st(io.is_read, io.size, io.address, rng)), bool(
            getattr(source, "state_dependent", True)
        )
    if isinstance(source, CarriedTime):
        return (lambda io: io.tag), False  # type: ignore[return-value]
    if callable(source):
        return (lambda io: source(io, rng)), True
    raise TypeError(
        f"service must be a ServiceDistribution, a device model with service_time(), or a callable "
        f"(io, rng) -> seconds; got {type(source).__name__}"
    )


@mypyc_attr(allow_interpreted_subclasses=True)  # subclassed by modules not compiled
class Station(Component):
    """A queueing station: ``servers`` servers, a service source, and a queue discipline.

    ``service`` is a :class:`~storagelab.kernel.service.ServiceDistribution`, a device model (whose
    ``parallelism`` is the default number of servers) or a callable ``(io, rng) -> seconds``.
    ``discipline`` is a :class:`~storagelab.kernel.disciplines.Discipline` or one of ``"fifo"``,
    ``"priority"``, ``"sstf"``, ``"elevator"``, ``"satf"``.
    """

    def __init__(
        self,
        name: str,
        service: object,
        servers: int | None = None,
        discipline: str | Discipline | None = None,
    ) -> None:
        super().__init__(name)
        if servers is None:
            servers = int(getattr(service, "parallelism", 1))
        if not isinstance(servers, int) or servers < 1:
            raise ValueError(f"station {name!r}: servers must be an integer >= 1, got {servers!r}")
        self.servers = servers
        self.service_source = service
        self.discipline = make_discipline(discipline)
        io_service(service, np.random.default_rng(0))  # validate the source type now
        #: what :meth:`submit` calls: the fast or the general path, chosen when bound (a caller that holds the
        #: station may call it directly, a call fewer per IO)
        self.accept: Callable[[IORequest], EventLike] = self._unbound

    def on_bind(self) -> None:
        src = self.service_source
        if hasattr(src, "service_time") and getattr(src, "state_dependent", True):
            # a device with state (a disk's head, an SSD's buffer) serves one station: shared, two
            # drives would move one head and draw from one block of variates
            owner = getattr(src, "_station", None)
            if owner is not None and owner is not self and owner.ctx is self.ctx:
                raise ValueError(
                    f"stations {owner.name!r} and {self.name!r} share one {type(src).__name__} device "
                    "model; give each station its own (ParamSet.device() returns a fresh one per call)"
                )
            with suppress(AttributeError):  # a frozen or slotted model cannot be tracked
                src._station = self  # type: ignore[attr-defined]  # a device model, tracked where it can be
        self._service, state_dependent = io_service(self.service_source, self.rng)
        # a distribution ignores the IO: draw from it directly on the fast path (one call fewer per IO)
        self._draw = (
            self.service_source.sampler(self.rng)
            if isinstance(self.service_source, ServiceDistribution)
            else None
        )
        self.discipline.bind(self)
        self.fast = self.discipline.fifo and not state_dependent
        self.timed = self.fast  # completion time known at arrival: submit_timed() is valid
        self._free = [0.0] * self.servers  # fast path: when each server is next free (a heap)
        self._inflight: list[float] = []  # fast path: completion times of accepted IOs not yet counted
        self._count_at = _COUNT_AT  # fast path: the length of _inflight at which they are counted
        self._ends: list[float] = []  # general path: end times of the jobs in service
        self._busy = 0  # general path: servers busy now
        self._wake_pending = False
        self.accept = self._submit_fast if self.fast else self._submit_general
        self.reset_stats()

    def _future_work(self, now: float) -> float:
        """Service already assigned to servers but lying after ``now`` (s).

        On the fast path each server's assigned work is contiguous up to its free time; on the general
        path it is what remains of the jobs in service.
        """
        ends = self._free if getattr(self, "fast", False) else getattr(self, "_ends", ())
        return sum(e - now for e in ends if e > now)

    def reset_stats(self) -> None:
        """Start a measurement window now: only service after now counts towards utilisation."""
        now = self.env._now if self.ctx is not None else 0.0
        self.completed = 0
        self.accepted = 0
        self.busy_time = self._future_work(now) if self.ctx is not None else 0.0
        self.wait_time = 0.0  # of IOs completed in the window
        self.service_time_done = 0.0  # of IOs completed in the window
        if self.ctx is not None:
            self._retire(now)
            self.completed = 0
            self.wait_time = self.service_time_done = 0.0

    def _retire(self, now: float) -> None:
        """Fast path: count the IOs whose completion time has passed, and keep the others; count again when
        the list has doubled (at least :data:`_COUNT_AT` long), so that a run holds a few thousand completion
        times per station however long it is, and counting costs a constant per IO."""
        inflight = self._inflight
        left = [t for t in inflight if t > now]
        self.completed += len(inflight) - len(left)
        self._inflight = left
        self._count_at = max(_COUNT_AT, 2 * len(left))

    # -- fast path -------------------------------------------------------------------------------
    def submit_timed(self, io: IORequest) -> float:
        """Fast path only: accept ``io`` and return the time it will complete, scheduling nothing.

        A caller that needs no event (an open-loop source recording the latency) saves the cost of
        one; :attr:`timed` says whether this is available.
        """
        now = self.env._now
        s = self._draw() if self._draw is not None else self._service(io)
        free = self._free
        start = free[0]
        if start < now:
            start = now
        done = start + s
        heapreplace(free, done)
        self.busy_time += s
        self.wait_time += start - now  # fast path: waits and services of IOs accepted in the window
        self.service_time_done += s
        self.accepted += 1
        inflight = self._inflight
        inflight.append(done)
        if len(inflight) >= self._count_at:
            self._retire(now)
        return done

    def submit_timed_work(self, s: float) -> float:
        """:meth:`submit_timed` for a job of ``s`` seconds of service on a station whose service time
        each job carries (:class:`~storagelab.kernel.service.CarriedTime`), with no IO object made to
        carry it: the same completion time and statistics as ``submit_timed`` of an IO tagged ``s``."""
        # submit_timed(io) with its service s given, inline
        now = self.env._now
        free = self._free
        start = free[0]
        if start < now:
            start = now
        done = start + s
        heapreplace(free, done)
        self.busy_time += s
        self.wait_time += start - now
        self.service_time_done += s
        self.accepted += 1
        inflight = self._inflight
        inflight.append(done)
        if len(inflight) >= self._count_at:
            self._retire(now)
        return done

    def _arrive_fast(self, io: IORequest) -> float:
        """Fast path, as a path's stage: accept ``io`` and return the time its event would fire at (what
        :meth:`_submit_fast` schedules), scheduling nothing."""
        now = self.env._now
        return now + (self.submit_timed(io) - now)

    def timed_entry(self) -> Callable[[IORequest], EventLike | float]:
        """What a caller that wakes at a completion time calls per IO (:func:`~storagelab.kernel.component.entry`):
        on the fast path the completion time, else the general path's event."""
        return self._arrive_fast if self.fast else self._submit_general

    def _submit_fast(self, io: IORequest) -> EventLike:
        # completion_in(env, submit_timed(io) - now, io), with both inline: the hot path of every
        # closed-loop run (the body of submit_timed, line for line)
        env = self.env
        now = env._now
        s = self._draw() if self._draw is not None else self._service(io)
        free = self._free
        start = free[0]
        if start < now:
            start = now
        done = start + s
        heapreplace(free, done)
        self.busy_time += s
        self.wait_time += start - now
        self.service_time_done += s
        self.accepted += 1
        inflight = self._inflight
        inflight.append(done)
        if len(inflight) >= self._count_at:
            self._retire(now)
        ev = Signal.__new__(Signal)
        ev.env, ev.callbacks, ev._value, ev._ok = env, [], io, True
        env._queue.push(now + (done - now), NORMAL_PRIORITY, ev)
        return ev

    # -- general path ----------------------------------------------------------------------------
    def _submit_general(self, io: IORequest) -> EventLike:
        env = self.env
        ev = Signal.__new__(Signal)  # Signal(env), without its __init__ call
        ev.env, ev.callbacks = env, []
        self.discipline.push([io, ev, env._now], env._now)
        self._dispatch()
        return ev

    def _start(self, job: list) -> None:
        env = self.env
        io, ev, arrived = job
        now = env._now
        s = self._service(io)
        self._busy += 1
        self.busy_time += s
        self._ends.append(now + s)
        ev._ok = True
        ev._value = io
        ev.callbacks.insert(0, partial(self._departed, now + s, now - arrived, s))
        env._queue.push(now + s, NORMAL_PRIORITY, ev)

    def _departed(self, end: float, wait: float, service: float, _ev: EventLike) -> None:
        self._busy -= 1
        self._ends.remove(end)
        self.completed += 1
        self.wait_time += wait
        self.service_time_done += service
        self._dispatch()

    def _dispatch(self, _ev: EventLike | None = None) -> None:
        """Start eligible waiting jobs on free servers; if some wait but none is eligible, look again at
        the discipline's next eligible time (one pending wake-up at a time)."""
        if _ev is not None:
            self._wake_pending = False
        disc, env = self.discipline, self.env
        while self._busy < self.servers and len(disc):
            job = disc.pop(env._now)
            if job is None:
                if self._wake_pending:
                    return
                wake = disc.next_eligible(env._now)
                if wake is None:
                    raise RuntimeError(
                        f"station {self.name!r}: discipline {type(disc).__name__} holds {len(disc)} job(s) "
                        "back with servers idle but names no time at which one becomes eligible"
                    )
                self._wake_pending = True
                completion_in(env, max(wake - env._now, 0.0), None).callbacks.append(self._dispatch)
                return
            self._start(job)

    def submit(self, io: IORequest) -> EventLike:
        return self.accept(io)

    def _unbound(self, io: IORequest) -> EventLike:
        raise RuntimeError(f"station {self.name!r} is not bound to a run; use storagelab simulate()")

    def stats(self, elapsed: float) -> dict[str, float]:
        """Over the measurement window: IOs completed, utilisation (service inside the window over
        servers x elapsed), mean number waiting (Little: total wait / elapsed), and the mean wait and
        service per IO (of IOs completed in the window; on the fast path, of IOs accepted in it)."""
        if elapsed <= 0:
            return {}
        now = self.env._now
        if self.fast:
            self._retire(now)
        done = self.completed
        counted = self.accepted if self.fast else done  # IOs whose wait and service the sums hold
        return {
            "completed": float(done),
            "throughput_iops": done / elapsed,
            "utilisation": (self.busy_time - self._future_work(now)) / (self.servers * elapsed),
            "mean_waiting": self.wait_time / elapsed,
            "mean_wait_ms": 1e3 * self.wait_time / counted if counted else 0.0,
            "mean_service_ms": 1e3 * self.service_time_done / counted if counted else 0.0,
        }
