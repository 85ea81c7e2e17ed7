"""A service station: ``servers`` identical servers in front of a queue with a pluggable discipline.

Two paths, chosen when the station is bound:

- **fast path** (FIFO discipline and a state-independent service source): the completion time is
  computed when the IO arrives, from the earliest time a server is free (the servers' free times are
  kept in a heap), and a single event is scheduled for it. Exact for FIFO, because a job's start
  depends only on the jobs before it.
- **general path** (reordering disciplines, or devices whose service time depends on state such as
  a disk head's position): jobs wait in the discipline; service time is drawn when service starts;
  each completion frees a server and starts the next eligible job.

Statistics use Little's law where they can, so the fast path stays O(1) per IO: mean number waiting =
total waiting time / elapsed time, utilisation = busy time / (servers x elapsed time).
"""

from __future__ import annotations

from heapq import heappush, heapreplace

from simpy.events import NORMAL, Event

from storagelab.kernel.component import Component, completion_in
from storagelab.kernel.disciplines import Discipline, make_discipline
from storagelab.kernel.io import IORequest
from storagelab.kernel.service import ServiceDistribution, io_service


class Station(Component):
    """A queueing station: ``servers`` servers, a service source, and a queue discipline.

    ``service`` is a :class:`~storagelab.kernel.service.ServiceDistribution`, a device model (whose
    ``parallelism`` is the default number of servers) or a callable ``(io, rng) -> seconds``.
    ``discipline`` is a :class:`~storagelab.kernel.disciplines.Discipline` or one of ``"fifo"``,
    ``"priority"``, ``"sstf"``, ``"elevator"``.
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
        io_service(service, __import__("numpy").random.default_rng(0))  # validate the source type now
        self.reset_stats()

    def on_bind(self) -> None:
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
        self._busy = 0  # general path: servers busy now
        self.submit = self._submit_fast if self.fast else self._submit_general

    def reset_stats(self) -> None:
        self.completed = 0
        self.busy_time = 0.0
        self.wait_time = 0.0

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
        self.completed += 1
        self.busy_time += s
        self.wait_time += start - now
        return done

    def _submit_fast(self, io: IORequest) -> Event:
        env = self.env
        return completion_in(env, self.submit_timed(io) - env._now, io)

    # -- general path ----------------------------------------------------------------------------
    def _submit_general(self, io: IORequest) -> Event:
        env = self.env
        ev = Event(env)
        job = [io, ev, env._now]
        if self._busy < self.servers and not len(self.discipline):
            self._start(job)
        else:
            self.discipline.push(job, env._now)
        return ev

    def _start(self, job: list) -> None:
        env = self.env
        io, ev, arrived = job
        now = env._now
        s = self._service(io)
        self._busy += 1
        self.completed += 1
        self.busy_time += s
        self.wait_time += now - arrived
        ev._ok = True
        ev._value = io
        ev.callbacks.insert(0, self._departed)  # free the server before the IO's own callbacks run
        heappush(env._queue, (now + s, NORMAL, next(env._eid), ev))

    def _departed(self, _ev: Event) -> None:
        self._busy -= 1
        self._dispatch()

    def _dispatch(self, _ev: Event | None = None) -> None:
        disc = self.discipline
        while self._busy < self.servers and len(disc):
            job = disc.pop(self.env._now)
            if job is None:  # jobs wait but none is eligible now (e.g. a QoS limit): look again later
                wake = disc.next_eligible(self.env._now)
                if wake is not None:
                    completion_in(self.env, max(wake - self.env._now, 0.0), None).callbacks.append(
                        self._dispatch
                    )
                return
            self._start(job)

    def submit(self, io: IORequest) -> Event:  # replaced per instance in on_bind
        raise RuntimeError(f"station {self.name!r} is not bound to a run; use storagelab simulate()")

    def stats(self, elapsed: float) -> dict[str, float]:
        if elapsed <= 0:
            return {}
        return {
            "completed": float(self.completed),
            "throughput_iops": self.completed / elapsed,
            "utilisation": self.busy_time / (self.servers * elapsed),
            "mean_waiting": self.wait_time / elapsed,  # Little: L_q = total wait / time
            "mean_wait_ms": 1e3 * self.wait_time / self.completed if self.completed else 0.0,
            "mean_service_ms": 1e3 * self.busy_time / self.completed if self.completed else 0.0,
        }
