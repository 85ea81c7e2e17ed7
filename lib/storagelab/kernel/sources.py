"""Where IOs come from: open-loop (a rate) and closed-loop (outstanding IOs per worker) sources.

A source draws IO attributes in numpy blocks from a *sampler* — any object with
``next_block(n) -> (is_read, size, address)`` arrays, such as an access specification's sampler
(:mod:`storagelab.workloads`) or :class:`FixedSampler` — and submits each IO to its target component.
On completion it records the latency with the run's recorder and keeps the time-weighted count of its
IOs in the system, so that Little's law (L = lambda W) can be checked independently of the latencies.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import cast

import numpy as np
from mypy_extensions import mypyc_attr

from storagelab.kernel.component import (
    NORMAL_PRIORITY,
    Component,
    EventLike,
    RunContext,
    Signal,
    TimedComponent,
    _check_environment,
    completion_in,
    heappop,
    heappush,
)
from storagelab.kernel.event_loop import Environment
from storagelab.kernel.io import IORequest
from storagelab.kernel.service import Exponential, ServiceDistribution

BLOCK = 4096


class FixedSampler:
    """IOs of one ``size`` (bytes), ``read_pct`` % reads, at uniformly random aligned addresses in ``span``."""

    def __init__(
        self,
        rng: np.random.Generator | None = None,
        size: int = 4096,
        read_pct: float = 100.0,
        span: int = 2**30,
    ) -> None:
        if size <= 0 or span < size or not 0 <= read_pct <= 100:
            raise ValueError("FixedSampler needs size > 0, span >= size and 0 <= read_pct <= 100")
        self.rng, self.size, self.read_pct, self.span = rng, size, read_pct, span

    def bind(self, rng: np.random.Generator) -> FixedSampler:
        return FixedSampler(rng, self.size, self.read_pct, self.span)

    def next_block(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rng = self.rng
        if rng is None:
            raise RuntimeError(
                "this FixedSampler has no generator: a source draws from bind(rng), not from it"
            )
        is_read = rng.random(n) < self.read_pct / 100 if self.read_pct < 100 else np.ones(n, dtype=bool)
        size = np.full(n, self.size, dtype=np.int64)
        blocks = self.span // self.size
        address = rng.integers(0, blocks, n, dtype=np.int64) * self.size
        return is_read, size, address


def _bind_sampler(sampler: object, rng: np.random.Generator, span: int | None, locality: object):
    """A sampler bound to the source's stream: ``bind(rng)``, an access spec's ``sampler(rng, span,
    locality)``, or a ready sampler."""
    if hasattr(sampler, "bind"):
        return sampler.bind(rng)
    if hasattr(sampler, "sampler"):
        if span is None:
            raise ValueError(
                "a source driven by an access specification needs span= (bytes the IOs may touch)"
            )
        return sampler.sampler(rng, span, locality)
    if hasattr(sampler, "next_block"):
        return sampler
    raise TypeError(
        f"a source needs a sampler with next_block(n) (or an access spec); got {type(sampler).__name__}"
    )


@mypyc_attr(allow_interpreted_subclasses=True)  # subclassed by modules not compiled
class Source:
    """Common part of sources: IO construction in blocks, completion recording, Little's-law counters."""

    def __init__(
        self,
        name: str,
        target: Component,
        sampler: object,
        cls: str | None = None,
        span: int | None = None,
        locality: object = None,
    ) -> None:
        if not name:
            raise ValueError("a source needs a name")
        if span is not None and span <= 0:
            raise ValueError(f"source {name!r}: span must be > 0 bytes, got {span}")
        self.name, self.target, self.sampler_spec = name, target, sampler
        self.span, self.locality = span, locality
        self.cls = cls or name
        #: Record reads and writes as classes "<cls> read" / "<cls> write" (set before the run).
        self.split_ops = False
        self.ctx: RunContext | None = None

    def bind(self, ctx: RunContext) -> None:
        if self.ctx is not None:
            raise ValueError(
                f"source {self.name!r} already belongs to a run; build fresh sources for each run"
            )
        _check_environment(ctx, f"source {self.name!r}")
        self.ctx = ctx
        self.env: Environment = ctx.env
        self.rng = ctx.streams.stream(f"source:{self.name}")
        self.sampler = _bind_sampler(
            self.sampler_spec, ctx.streams.stream(f"sampler:{self.name}"), self.span, self.locality
        )
        self._block: list = []
        self._k = 0
        # the class each IO is recorded under, by op (the same for both unless reads and writes are split)
        self._op_cls = (
            {True: f"{self.cls} read", False: f"{self.cls} write"}
            if self.split_ops
            else {True: self.cls, False: self.cls}
        )
        self.in_system = 0
        self.issued_total = 0  # every IO issued, warm-up included (for speed measurements)
        self.reset_stats()
        self._record = ctx.recorder.record if ctx.recorder is not None else None

    def reset_stats(self) -> None:
        self.submitted = 0
        self.completed = 0
        self._area = 0.0  # integral of in-system count over time
        self._last = self.env._now if self.ctx else 0.0
        self._t0 = self._last

    def _next_io(self) -> IORequest:
        k = self._k
        if k >= len(self._block):
            r, s, a = self.sampler.next_block(BLOCK)
            self._block = list(zip(r.tolist(), s.tolist(), a.tolist(), strict=True))
            k = 0
        self._k = k + 1
        is_read, size, address = self._block[k]
        return IORequest(is_read, size, address, 0, self._op_cls[is_read], self.env._now)

    def _issue(self, io: IORequest | None = None) -> None:
        """Submit ``io`` (default: the next IO) to the target, counting it in the system."""
        now = self.env._now
        n = self.in_system
        self._area += n * (now - self._last)
        self._last = now
        self.in_system = n + 1
        self.submitted += 1
        self.issued_total += 1
        if io is None:  # _next_io(), inlined
            k = self._k
            if k >= len(self._block):
                r, s, a = self.sampler.next_block(BLOCK)
                self._block = list(zip(r.tolist(), s.tolist(), a.tolist(), strict=True))
                k = 0
            self._k = k + 1
            is_read, size, address = self._block[k]
            io = IORequest(is_read, size, address, 0, self._op_cls[is_read], now)
        self.target.submit(io).callbacks.append(self._completed)

    def _completed(self, ev: EventLike) -> None:
        io: IORequest = ev._value
        now = self.env._now
        n = self.in_system
        self._area += n * (now - self._last)
        self._last = now
        self.in_system = n - 1
        self.completed += 1
        if self._record is not None:
            self._record(io.cls, now - io.submitted, now, io.size)

    def littles_law(self) -> dict[str, float]:
        """Mean number in system measured by time average (L), for comparison with lambda x W."""
        now = self.env._now
        area = self._area + self.in_system * (now - self._last)
        elapsed = now - self._t0
        return {
            "mean_in_system": area / elapsed if elapsed > 0 else float("nan"),
            "elapsed": elapsed,
            "completed": float(self.completed),
        }


class OpenSource(Source):
    """Open loop: IOs arrive at ``rate`` per second (Poisson by default, or any interarrival distribution),
    regardless of how many are outstanding. ``rate_scale(t)`` (e.g. a phase schedule) modulates the rate
    by thinning, so storms and ramps keep Poisson arrivals. ``silent_from`` (s) is the time from which
    ``rate_scale(t)`` is 0 for good (a schedule's silent tail: :attr:`PhaseSchedule.silent_from
    <storagelab.workloads.phases.PhaseSchedule.silent_from>`): thinning would drop every candidate
    arrival after it, so the source stops drawing them there (the same IOs; a storm followed by a long
    quiet window costs nothing for the quiet part).

    Two exact shortcuts, on unless ``shortcuts=False``: when the target can say at arrival when an IO
    will complete (a FIFO station on its fast path), the latency is recorded then and no completion
    event is scheduled; and when no other event is scheduled before this source's next arrival, the
    source moves the clock to it directly instead of scheduling an event (events are still processed
    in time order: the next arrival is taken inline only if it precedes everything in the queue).
    """

    def __init__(
        self,
        name: str,
        target: Component,
        sampler: object,
        rate: float | None = None,
        interarrival: ServiceDistribution | None = None,
        cls: str | None = None,
        rate_scale: Callable[[float], float] | None = None,
        max_scale: float = 1.0,
        shortcuts: bool = True,
        span: int | None = None,
        locality: object = None,
        silent_from: float = math.inf,
    ) -> None:
        super().__init__(name, target, sampler, cls, span, locality)
        self.silent_from = _silent_from(name, silent_from, rate_scale)
        self.shortcuts = shortcuts
        if (rate is None) == (interarrival is None):
            raise ValueError(f"open source {name!r}: give exactly one of rate (IO/s) or interarrival")
        if rate is not None and not rate > 0:
            raise ValueError(f"open source {name!r}: rate must be > 0 IO/s, got {rate}")
        if interarrival is not None and not isinstance(interarrival, ServiceDistribution):
            raise ValueError(
                f"open source {name!r}: interarrival must be a distribution such as Exponential(mean), "
                f"got {interarrival!r}"
            )
        self.interarrival = interarrival or Exponential(1.0 / rate)  # type: ignore[operator]  # one is given
        self.rate_scale, self.max_scale = rate_scale, max_scale
        if rate_scale is not None and not max_scale > 0:
            raise ValueError(f"open source {name!r}: max_scale must bound rate_scale(t) from above, > 0")
        if rate_scale is not None and not isinstance(self.interarrival, Exponential):
            raise ValueError(
                f"open source {name!r}: rate_scale modulates Poisson arrivals by thinning; "
                "use rate= or Exponential interarrival times with it"
            )

    def bind(self, ctx: RunContext) -> None:
        super().bind(ctx)
        gap = self.interarrival
        if self.rate_scale is not None:  # thinning: draw at the peak rate, keep with prob scale/max
            gap = type(gap)(gap.mean / self.max_scale) if isinstance(gap, Exponential) else gap
            self._keep = self.rng.random
        self._gap = gap.sampler(self.rng)
        self._timed = (
            cast(TimedComponent, self.target).submit_timed
            if self.shortcuts and getattr(self.target, "timed", False)
            else None
        )
        # a target that knows some IOs' completion times at arrival (submit_known returns a time for
        # those, an event for the rest): those are recorded at arrival, the rest at their event
        self._known = (
            getattr(self.target, "submit_known", None) if self.shortcuts and self._timed is None else None
        )
        self._pending: list[float] = []  # timed IOs: completion times of those still in the system
        completion_in(self.env, self._gap(), None).callbacks.append(self._arrive)

    def _arrive(self, _ev: EventLike) -> None:
        env, queue, gap, scale = self.env, self.env._queue, self._gap, self.rate_scale
        issue = (
            self._issue_timed
            if self._timed is not None
            else self._issue_known
            if self._known is not None
            else self._issue
        )
        shortcuts = self.shortcuts
        # arrivals taken inline before the next is scheduled as an event: unbounded, or a few where the run
        # has limits (run_limits), so that the event loop gets control back to check them
        room = env.inline_cap
        if scale is None:  # every arrival is kept
            while True:
                issue()
                room -= 1
                # declared a float: compiled, a numpy scalar time (a float subclass) is taken as a float, so the
                # comparisons below give bools, not numpy's
                t: float = env._now + gap()
                if not shortcuts or queue.first() <= t or queue.empty() or room == 0:
                    self._schedule(t)
                    return
                env._now = t  # nothing is scheduled before the next arrival: take it inline
        keep, top, silent = self._keep, self.max_scale, self.silent_from
        while True:  # thinning: a candidate is kept with probability rate_scale(now) / max_scale
            if keep() * top < scale(env._now):
                issue()
            room -= 1
            t = env._now + gap()
            if t >= silent:  # rate_scale is 0 from here on: thinning would drop every later candidate
                return
            if not shortcuts or queue.first() <= t or queue.empty() or room == 0:
                self._schedule(t)
                return
            env._now = t

    def _schedule(self, t: float) -> None:
        """The next arrival, at ``t`` (s): completion_in(env, t - now, None) calling this source."""
        env = self.env
        ev = Signal.__new__(Signal)
        ev.env, ev.callbacks, ev._value, ev._ok = env, [self._arrive], None, True
        env._queue.push(env._now + (t - env._now), NORMAL_PRIORITY, ev)

    # -- timed mode: latency known at arrival --------------------------------------------------------
    def _issue_timed(self) -> None:
        now = self.env._now
        io = self._next_io()
        done = self._timed(io)  # type: ignore[misc]  # set (not None) wherever this method is used
        self.submitted += 1
        self.issued_total += 1
        self._area += done - now
        pending = self._pending
        while pending and pending[0] <= now:
            heappop(pending)
            self.completed += 1
        heappush(pending, done)
        if self._record is not None:
            self._record(io.cls, done - now, done, io.size)

    def _issue_known(self) -> None:
        """The next IO, to a target that knows some completion times at arrival (``submit_known``): one
        it knows is counted and recorded as :meth:`_issue_timed` does, the rest as :meth:`_issue` does."""
        now = self.env._now
        io = self._next_io()
        done = self._known(io)  # type: ignore[misc]  # set (not None) wherever this method is used
        self.submitted += 1
        self.issued_total += 1
        if done.__class__ is not float:  # an event: Source._issue's accounting, inline
            n = self.in_system
            self._area += n * (now - self._last)
            self._last = now
            self.in_system = n + 1
            done.callbacks.append(self._completed)
            return
        # a known completion: _issue_timed's accounting, repeated here (the open loop's hot path)
        self._area += done - now
        pending = self._pending
        while pending and pending[0] <= now:
            heappop(pending)
            self.completed += 1
        heappush(pending, done)
        if self._record is not None:
            self._record(io.cls, done - now, done, io.size)

    def reset_stats(self) -> None:
        if getattr(self, "_pending", None):  # timed IOs finished before now are not the window's
            while self._pending and self._pending[0] <= self.env._now:
                heappop(self._pending)
        super().reset_stats()
        if getattr(self, "_pending", None):  # count only the part after now of timed IOs in flight
            now = self.env._now
            self._area = sum(d - now for d in self._pending if d > now)

    def littles_law(self) -> dict[str, float]:
        if self._timed is None and self._known is None:
            return super().littles_law()
        now, pending = self.env._now, self._pending
        while pending and pending[0] <= now:
            heappop(pending)
            self.completed += 1
        # timed IOs added their whole time in the system at arrival; the others accrue as they wait
        area = self._area + self.in_system * (now - self._last) - sum(d - now for d in pending)
        elapsed = now - self._t0
        return {
            "mean_in_system": area / elapsed if elapsed > 0 else float("nan"),
            "elapsed": elapsed,
            "completed": float(self.completed),
        }


def _silent_from(name: str, silent_from: object, rate_scale: object) -> float:
    """``silent_from`` checked: a time >= 0 s (inf: never), finite only with a ``rate_scale``."""
    if isinstance(silent_from, bool) or not isinstance(silent_from, int | float) or not silent_from >= 0:
        raise ValueError(
            f"open source {name!r}: silent_from must be a time >= 0 s (inf: never silent), got {silent_from!r}"
        )
    if math.isfinite(silent_from) and rate_scale is None:
        raise ValueError(
            f"open source {name!r}: silent_from ({silent_from} s) says when rate_scale falls to 0 for good; "
            "give it with a rate_scale"
        )
    return float(silent_from)


class ClosedSource(Source):
    """Closed loop: ``workers`` workers each keep ``outstanding`` IOs in flight (IOmeter's queue depth;
    by default the access specification's ``queue_depth``, else 1),
    waiting ``think`` seconds (a number or distribution) after each completion before the next IO.
    A distribution with ``per_worker = True`` (e.g. Iometer bursts) keeps its state per worker slot.

    With ``async_writes`` a worker waits for its reads only: each write it draws is submitted without
    holding the worker (its latency is still recorded) and the worker draws again until it draws a
    read, which it waits for. This is how a database engine writes: its threads wait for the pages they
    read, while the pages they dirty are written back later by the engine (Exchange's ESE flushes dirty
    pages from its cache in the background). The writes per read keep the sampler's read share."""

    def __init__(
        self,
        name: str,
        target: Component,
        sampler: object,
        workers: int = 1,
        outstanding: int | None = None,
        think: float | ServiceDistribution = 0.0,
        cls: str | None = None,
        span: int | None = None,
        locality: object = None,
        async_writes: bool = False,
    ) -> None:
        super().__init__(name, target, sampler, cls, span, locality)
        if async_writes and getattr(sampler, "read_pct", None) == 0:
            raise ValueError(
                f"closed source {name!r}: async_writes needs reads to wait for, but read_pct is 0"
            )
        if async_writes and getattr(think, "per_worker", False):
            raise ValueError(
                f"closed source {name!r}: async_writes does not combine with a per-worker think pattern"
            )
        self.async_writes = bool(async_writes)
        if outstanding is None:  # an access specification carries its queue depth
            outstanding = int(getattr(sampler, "queue_depth", 1))
        if not isinstance(workers, int) or workers < 1 or not isinstance(outstanding, int) or outstanding < 1:
            raise ValueError(f"closed source {name!r}: workers and outstanding must be integers >= 1")
        if not isinstance(think, ServiceDistribution) and not (isinstance(think, int | float) and think >= 0):
            raise ValueError(f"closed source {name!r}: think must be >= 0 s or a distribution, got {think!r}")
        self.workers, self.outstanding, self.think = workers, outstanding, think

    def bind(self, ctx: RunContext) -> None:
        super().bind(ctx)
        think = self.think
        slots = self.workers * self.outstanding
        self._slot_think: list | None = None
        if isinstance(think, ServiceDistribution) and getattr(think, "per_worker", False):
            # a think pattern with state (bursts): one sampler per outstanding-IO slot
            self._slot_think = [think.sampler(self.rng) for _ in range(slots)]
            self._slot_clocked = bool(getattr(think, "clocked", False))  # the samplers take the time
            self._slot_of: dict[IORequest, int] = {}
            self._think = None
        elif isinstance(think, ServiceDistribution):
            self._think = think.sampler(self.rng)
        elif think > 0:
            self._think = lambda: think
        else:
            self._think = None
        # what issues a worker's next IO: with async_writes the worker waits for reads only
        self._issue_next = self._issue_read_after_writes if self.async_writes else self._issue
        for k in range(slots):
            if self._slot_think is None:
                self._issue_next()
            else:
                self._issue_slot(k)

    def _issue_read_after_writes(self, io: IORequest | None = None) -> None:
        """Draw IOs until a read: submit each write drawn on the way without holding the worker, then
        the read, whose completion frees the worker (``async_writes``)."""
        if io is None:
            io = self._next_io()
        while not io.is_read:
            now = self.env._now
            self._area += self.in_system * (now - self._last)
            self._last = now
            self.in_system += 1
            self.submitted += 1
            self.issued_total += 1
            self.target.submit(io).callbacks.append(self._write_done)
            io = self._next_io()
        Source._issue(self, io)

    def _write_done(self, ev: EventLike) -> None:
        """An asynchronous write's completion: recorded and counted, no next IO."""
        Source._completed(self, ev)

    def _issue_slot(self, k: int) -> None:
        """Issue the next IO of slot ``k`` (think patterns with per-worker state)."""
        io = self._next_io()
        self._slot_of[io] = k
        self._issue_next(io)

    def _completed(self, ev: EventLike) -> None:
        # Source._completed(self, ev), inline: once per IO of every closed-loop run
        io: IORequest = ev._value
        now = self.env._now
        n = self.in_system
        self._area += n * (now - self._last)
        self._last = now
        self.in_system = n - 1
        self.completed += 1
        if self._record is not None:
            self._record(io.cls, now - io.submitted, now, io.size)
        if self._slot_think is not None:
            k = self._slot_of.pop(ev._value)
            gap = self._slot_think[k](self.env._now) if self._slot_clocked else self._slot_think[k]()
            if gap > 0:
                completion_in(self.env, gap, None).callbacks.append(lambda _e: self._issue_slot(k))
            else:
                self._issue_slot(k)
        elif self._think is None:
            self._issue_next()
        else:
            completion_in(self.env, self._think(), None).callbacks.append(lambda _e: self._issue_next())
