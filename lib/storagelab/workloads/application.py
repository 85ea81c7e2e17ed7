"""Application workloads: what an application sends to storage, as streams of IOs built from access
specifications, with the numbers that define it.

An :class:`ApplicationWorkload` is one or more :class:`Stream` objects (an access specification driven
open-loop at a rate, or closed-loop by workers with outstanding IOs and think time, against a named
volume) and the numbers that define it, each a :class:`~storagelab.provenance.Param` whose ``origin``
says whether the study states it (``document``), another source does (``datasheet``), it was fitted on
published points (``fit``) or it is an ``assumption`` (with its evidence in ``source``);
:func:`documented`, :func:`assumed` and :func:`fit_default` build them. :class:`BurstThink` is the think
time of an Iometer worker with bursts. :func:`combine` runs several applications together.

Volumes are named by the caller (``volume=...``); an architecture preset maps names to components
(:attr:`storagelab.architectures.topology.Topology.volumes`), and :meth:`ApplicationWorkload.sources` builds the
kernel sources against them.

The generators of the applications the studies ran are in :mod:`storagelab.workloads.catalogue` (those
that one study alone runs are in that study's ``workloads`` module, e.g.
:mod:`storagelab.studies.ds5020.workloads`).

Units: sizes and spans in bytes, times in seconds, rates in IO/s (SI inside; ``Param`` keeps the
document's unit for display).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from storagelab.kernel.component import Component
from storagelab.kernel.service import ServiceDistribution
from storagelab.kernel.sources import ClosedSource, OpenSource, Source
from storagelab.provenance import Param
from storagelab.workloads.access_spec import AccessSpec
from storagelab.workloads.locality import Locality
from storagelab.workloads.phases import PhaseSchedule

__all__ = [
    "ApplicationWorkload",
    "BurstThink",
    "Stream",
    "assumed",
    "combine",
    "documented",
    "documented_default",
    "fit_default",
    "need_count",
    "need_positive",
]


class BurstThink(ServiceDistribution):
    """Think times of an Iometer worker with bursts: ``burst_length`` IOs back to back (think 0), then
    ``delay`` seconds before the next burst. Its mean is ``delay / burst_length`` seconds per IO.
    A closed source keeps one burst counter per worker (``per_worker``).

    With ``timer_tick`` (s), the wait before a burst ends on a tick of the worker's OS timer, the first
    at or after ``delay`` has passed, as a wait with a timeout does on an OS whose timer interrupts at
    that period: Iometer waits for its transfer delay with a timeout on its IO completion port
    (``src/IOGrunt.cpp``, ``Asynchronous_Delay``) and does not raise the timer's resolution. Each
    worker's timer has its own phase (a desktop VM's clock), drawn once. The source then gives the
    sampler the time (``clocked``); ``mean`` stays the nominal ``delay / burst_length``.
    """

    per_worker = True

    def __init__(self, burst_length: int, delay: float, timer_tick: float | None = None) -> None:
        if isinstance(burst_length, bool) or not isinstance(burst_length, int) or burst_length < 1:
            raise ValueError(f"burst_length must be an integer >= 1 IO, got {burst_length!r}")
        if not (isinstance(delay, int | float) and math.isfinite(delay) and delay >= 0):
            raise ValueError(f"burst delay must be a finite number of seconds >= 0, got {delay!r}")
        if timer_tick is not None and not (isinstance(timer_tick, int | float) and math.isfinite(timer_tick)
                                           and timer_tick > 0):  # fmt: skip
            raise ValueError(f"timer_tick must be a finite number of seconds > 0 or None, got {timer_tick!r}")
        object.__setattr__(self, "mean", delay / burst_length)
        object.__setattr__(self, "scv", 0.0 if burst_length == 1 else float(burst_length - 1))
        object.__setattr__(self, "burst_length", burst_length)
        object.__setattr__(self, "delay", float(delay))
        object.__setattr__(self, "timer_tick", None if timer_tick is None else float(timer_tick))

    @property
    def clocked(self) -> bool:
        """Whether the sampler needs the current time (a timer tick rounds the delay)."""
        return self.timer_tick is not None

    def _draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        k = np.arange(n)
        return np.where(k % self.burst_length == self.burst_length - 1, self.delay, 0.0)

    def sampler(self, rng: np.random.Generator) -> Callable[..., float]:
        """One worker's think times: ``draw()``, or ``draw(now)`` when :attr:`clocked`."""
        count = [0]
        length, delay, tick = self.burst_length, self.delay, self.timer_tick
        if tick is None:

            def draw() -> float:
                count[0] += 1
                return delay if count[0] % length == 0 else 0.0

            return draw
        phase = float(rng.random()) * tick  # this worker's timer: ticks at phase + k x tick

        def draw_clocked(now: float) -> float:
            count[0] += 1
            if count[0] % length:
                return 0.0
            ticks = math.ceil((now + delay - phase) / tick)
            return phase + ticks * tick - now

        return draw_clocked


@dataclass(frozen=True)
class Stream:
    """One stream of an application's IOs: ``spec`` over ``span`` bytes of volume ``volume``.

    Closed loop when ``workers`` > 0 (each keeps ``outstanding`` IOs in flight and thinks ``think``
    seconds, a number or a distribution, after each completion); open loop at ``rate`` IO/s otherwise,
    modulated by ``schedule`` (a :class:`PhaseSchedule` whose multipliers scale ``rate``).
    ``name`` names the source and the class of its IOs in results; with ``split_ops`` reads and writes
    are recorded as two classes, ``"<name> read"`` and ``"<name> write"``. With ``async_writes`` (closed
    loop only) the workers wait for their reads only and submit their writes without waiting
    (:class:`~storagelab.kernel.sources.ClosedSource`).
    """

    name: str
    volume: str
    spec: AccessSpec
    span: int
    workers: int = 0
    outstanding: int = 1
    think: float | ServiceDistribution = 0.0
    rate: float | None = None
    schedule: PhaseSchedule | None = None
    locality: Locality | None = None
    split_ops: bool = False
    async_writes: bool = False

    def __post_init__(self) -> None:
        if not self.name or not self.volume:
            raise ValueError("a stream needs a name and a volume")
        if self.span < self.spec.max_size:
            raise ValueError(f"stream {self.name!r}: span {self.span} B is smaller than its largest IO")
        closed, open_ = self.workers > 0, self.rate is not None
        if closed == open_:
            raise ValueError(
                f"stream {self.name!r}: give workers (closed loop) or rate (open loop), not both"
            )
        if open_ and not self.rate > 0:
            raise ValueError(f"stream {self.name!r}: rate must be > 0 IO/s, got {self.rate}")
        if open_ and self.async_writes:
            raise ValueError(
                f"stream {self.name!r}: async_writes applies to a closed loop (workers), not a rate"
            )

    @property
    def closed(self) -> bool:
        """Whether IOs are driven by workers (closed loop) rather than a rate."""
        return self.workers > 0

    @property
    def peak_rate(self) -> float | None:
        """Open loop: the highest offered rate (IO/s) over the schedule; closed loop: None."""
        if self.rate is None:
            return None
        return self.rate * (self.schedule.max_scale if self.schedule is not None else 1.0)

    def source(self, target: Component) -> Source:
        """A kernel source that drives this stream against ``target`` (with ``split_ops``, its reads and
        writes are recorded as classes ``"<name> read"`` and ``"<name> write"``)."""
        source = self._source(target)
        source.split_ops = self.split_ops
        return source

    def _source(self, target: Component) -> Source:
        if self.closed:
            return ClosedSource(
                self.name, target, self.spec, workers=self.workers, outstanding=self.outstanding,
                think=self.think, span=self.span, locality=self.locality, async_writes=self.async_writes,
            )  # fmt: skip
        sched = self.schedule
        return OpenSource(
            self.name, target, self.spec, rate=self.rate, span=self.span, locality=self.locality,
            rate_scale=sched.rate_scale_at if sched is not None else None,
            max_scale=sched.max_scale if sched is not None else 1.0,
            silent_from=sched.silent_from if sched is not None else math.inf,
        )  # fmt: skip


@dataclass(frozen=True)
class ApplicationWorkload:
    """An application as the studies ran it: its IO streams and the numbers that define it."""

    name: str
    streams: tuple[Stream, ...]
    params: Mapping[str, Param] = field(default_factory=dict)
    notes: str = ""

    def __post_init__(self) -> None:
        names = [s.name for s in self.streams]
        if not names or len(set(names)) < len(names):
            raise ValueError(f"workload {self.name!r}: needs streams with distinct names, got {names}")

    @property
    def volumes(self) -> tuple[str, ...]:
        """The volume names the streams target (each once, in order)."""
        return tuple(dict.fromkeys(s.volume for s in self.streams))

    def sources(self, volumes: Mapping[str, Component]) -> list[Source]:
        """Kernel sources for every stream, each against ``volumes[stream.volume]``."""
        missing = [v for v in self.volumes if v not in volumes]
        if missing:
            raise KeyError(
                f"workload {self.name!r} targets volumes {missing} that the topology does not have; "
                f"it has: {', '.join(volumes)}"
            )
        return [s.source(volumes[s.volume]) for s in self.streams]

    def with_param(self, key: str, param: Param) -> ApplicationWorkload:
        """This workload with its defining number ``key`` re-tagged (e.g. a study that fitted it)."""
        if key not in self.params:
            raise KeyError(
                f"workload {self.name!r} has no parameter {key!r}; it has: {', '.join(self.params)}"
            )
        return replace(self, params={**self.params, key: param})

    def with_stream(
        self,
        stream: str,
        *,
        read_pct: float | None = None,
        io_size: int | None = None,
        rate: float | None = None,
    ) -> ApplicationWorkload:
        """This workload with its stream named ``stream`` changed: the share of its IOs that are reads
        (``read_pct``, %), its one IO size (``io_size``, bytes: the spec must have a single size) or its
        open-loop rate (``rate``, IO/s); its ``params`` are kept (a study that reads a drawn value through a
        :class:`~storagelab.architectures.parameters.ParamSet` builds the streams from it and keeps the
        declared numbers)."""
        names = [s.name for s in self.streams]
        if stream not in names:
            raise KeyError(f"workload {self.name!r} has no stream {stream!r}; it has: {', '.join(names)}")
        old = self.streams[names.index(stream)]
        spec = old.spec
        if read_pct is not None or io_size is not None:
            update: dict[str, object] = {}
            if read_pct is not None:
                update["read_pct"] = float(read_pct)
            if io_size is not None:
                if len(spec.sizes) != 1:
                    raise ValueError(
                        f"stream {stream!r}: io_size replaces a single size; the spec mixes {len(spec.sizes)}"
                    )
                update["sizes"] = (spec.sizes[0].model_copy(update={"size": int(io_size)}),)
            spec = AccessSpec.model_validate({**spec.model_dump(), **update})
        new = replace(old, spec=spec) if rate is None else replace(old, spec=spec, rate=float(rate))
        streams = tuple(new if s.name == stream else s for s in self.streams)
        return replace(self, streams=streams)

    def from_time(self, t: float) -> ApplicationWorkload:
        """This workload as it runs from ``t`` s on: each open-loop stream's schedule starts at ``t``
        (:meth:`PhaseSchedule.after`); streams without a schedule are unchanged. A run of the result
        starts with empty queues, so it still needs a warm-up, but not the ``t`` seconds before."""
        if not (isinstance(t, int | float) and not isinstance(t, bool) and math.isfinite(t) and t > 0):
            raise ValueError(f"workload {self.name!r}: t must be a time > 0 s, got {t!r}")
        streams = tuple(
            s if s.schedule is None else replace(s, schedule=s.schedule.after(t)) for s in self.streams
        )
        return replace(self, name=f"{self.name} from {t:g} s", streams=streams)

    def param_table(self) -> list[dict[str, object]]:
        """The defining numbers as rows: name, value, unit, origin, source."""
        return [
            {"workload": self.name, "parameter": k, "value": p.value, "unit": p.unit, "origin": p.origin,
             "source": p.source}
            for k, p in self.params.items()
        ]  # fmt: skip


def combine(name: str, parts: Sequence[ApplicationWorkload], notes: str = "") -> ApplicationWorkload:
    """Several applications run together (a tile, a mixed-workload test) as one workload."""
    params = {f"{w.name}: {k}": p for w in parts for k, p in w.params.items()}
    return ApplicationWorkload(name, tuple(s for w in parts for s in w.streams), params, notes)


# -- a generator's defining numbers ----------------------------------------------------------------------


def documented(value: float, unit: str, source: str) -> Param:
    """A number the document states (``source``: where, with the quote)."""
    return Param(value, unit, "document", source)


def assumed(value: float, unit: str, why: str) -> Param:
    """A number no document states (``why``: the evidence for it)."""
    return Param(value, unit, "assumption", why)


def fit_default(value: float, default: float, unit: str, how: str, fitted_on: tuple[str, ...]) -> Param:
    """The generator's default for a number fitted on published points, or the caller's own value."""
    if value == default:
        return Param(value, unit, "fit", how, fitted_on=fitted_on)
    return Param(value, unit, "user", f"set by the caller (the default {default:g} is a fit: {how})")


def documented_default(value: float, default: float, unit: str, source: str) -> Param:
    """The study's documented value of a number a user varies (``source`` quotes it), or the caller's own
    value, tagged ``user``, when it differs."""
    if value == default:
        return Param(value, unit, "document", source)
    return Param(value, unit, "user", f"set by the caller (the study's value is {default:g}: {source})")


# -- a generator's arguments -----------------------------------------------------------------------------


def need_count(generator: str, arg: str, value: object, low: int = 1) -> int:
    """``value`` as a count of at least ``low``; otherwise a ValueError naming ``generator``'s argument
    ``arg`` and the allowed range."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise ValueError(f"{generator}: {arg} must be an integer >= {low}, got {value!r}")
    return int(value)


def need_positive(generator: str, arg: str, value: object, unit: str, *, zero: bool = False) -> float:
    """``value`` as a finite number > 0 (>= 0 with ``zero``); otherwise a ValueError naming
    ``generator``'s argument ``arg``, the allowed range and the unit."""
    ok = isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)
    if not (ok and math.isfinite(value) and (value >= 0 if zero else value > 0)):
        raise ValueError(
            f"{generator}: {arg} must be a finite number {'>= 0' if zero else '> 0'} {unit}, got {value!r}"
        )
    return float(value)
