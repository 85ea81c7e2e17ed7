"""Application workloads of the source studies, built from access specifications.

Each generator returns an :class:`ApplicationWorkload`: one or more :class:`Stream` objects (an access
specification driven open-loop at a rate, or closed-loop by workers with outstanding IOs and think
time, against a named volume) and the numbers that define it, each a
:class:`~storagelab.devices.Param` whose ``origin`` says whether the study states it (``document``),
another source does (``datasheet``) or it is an ``assumption`` (with its evidence in ``source``).

Volumes are named by the caller (``volume=...``); an architecture preset maps names to components
(:attr:`storagelab.architectures.topology.Topology.volumes`), and :meth:`ApplicationWorkload.sources` builds the
kernel sources against them.

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
from storagelab.workloads.access_spec import (
    IOMETER_4K_70_30_RANDOM,
    IOMETER_WEB_SERVER,
    AccessSpec,
    SizeShare,
)
from storagelab.workloads.locality import Locality
from storagelab.workloads.phases import Phase, PhaseSchedule

__all__ = [
    "ApplicationWorkload",
    "BurstThink",
    "Stream",
    "atlantis_vdi_iometer",
    "backup_stream",
    "boot_storm",
    "combine",
    "dvd_store",
    "ilio_extra_writes",
    "iometer_cache_reads",
    "iometer_sequential_read",
    "iometer_web_server",
    "jetstress",
    "loadgen_outlook_200",
    "login_vsi",
    "orion_basic_matrix",
    "orion_large",
    "orion_small",
    "sequential_scan",
    "vsan_iometer",
]

_DS5020 = "002_3dbf0d9df4c2366f.txt (ESG Lab, IBM DS5020)"
_NEXGEN = "000_95d1997ae9f905ef.txt (NexGen N5, Principled Technologies)"
_VSAN = "001_8f3c5816f8fbf1d5.txt (Intel + VMware Virtual SAN 5.5)"
_ILIO = "004_496e3827612b8d9a.txt (Dell Wyse + Atlantis ILIO)"

GiB = 2**30


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
            raise ValueError(f"stream {self.name!r}: async_writes applies to a closed loop (workers), not a rate")

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
            raise KeyError(f"workload {self.name!r} has no parameter {key!r}; it has: {', '.join(self.params)}")
        return replace(self, params={**self.params, key: param})

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


def _doc(value: float, unit: str, source: str) -> Param:
    return Param(value, unit, "document", source)


def _assume(value: float, unit: str, why: str) -> Param:
    return Param(value, unit, "assumption", why)


def _fit_default(value: float, default: float, unit: str, how: str, fitted_on: tuple[str, ...]) -> Param:
    """The generator's default for a number fitted on published points, or the caller's own value."""
    if value == default:
        return Param(value, unit, "fit", how, fitted_on=fitted_on)
    return Param(value, unit, "user", f"set by the caller (the default {default:g} is a fit: {how})")


#: The published points the DVD Store IOs per order were computed from (NexGen scenario 2).
IOS_PER_ORDER_FITTED_ON = ("s2-cache-iops-mean", "s2-opm-lo", "s2-opm-hi")
#: The published points the IOs per desktop boot were computed from (ILIO study, 7.1.5).
IOS_PER_BOOT_FITTED_ON = ("boot-t1-peak", "boot-time-75")


# -- Exchange -----------------------------------------------------------------------------------------

#: Exchange 2007 (ESE 08.01, as in the DS5020 Jetstress report) reads and writes 8 KiB database pages.
EXCHANGE_2007_PAGE = 8 * 1024


#: Dataset rows the Jetstress thread think time is computed from (Figure 16, the four-tile run's first
#: instance: its latency is Table 2's four-tile latency, so those points count as fitted too).
_JETSTRESS_FITTED_ON = (
    "ds5020-f16-db-reads", "ds5020-f16-db-read-lat", "ds5020-t2-latency-t4", "ds5020-t2-iops-t4",
)  # fmt: skip


def jetstress(
    name: str = "jetstress",
    *,
    mailboxes: int = 2280,
    iops_per_mailbox: float = 0.5,
    threads: int = 32,
    db_volume: str = "exchange-db",
    log_volume: str = "exchange-log",
    db_span: int = 1_089 * 10**9,
    log_span: int = 557 * 10**9,
) -> ApplicationWorkload:
    """Microsoft Jetstress as run on the DS5020: ``threads`` database threads (closed loop) reading
    8 KiB random database pages, the database writes in the measured read share, and sequential log
    writes at the measured log/database ratio of the target rate ``mailboxes x iops_per_mailbox``.

    The database writes are asynchronous: a thread waits for the pages it reads, while the pages its
    transactions dirty are written back by ESE from its database cache in the background (Figure 16's
    log: 'Database flush thresholds: (start: 2.6 MB, stop: 5.1 MB)'; Jetstress's pass criteria bound
    the database reads' latency and the log writes', not the database writes'). So a thread waits for
    its reads only, and the writes follow at Figure 16's 0.765 per read
    (:class:`~storagelab.kernel.sources.ClosedSource` with ``async_writes``).

    The target (2,280 x 0.5 = 1,140 IOPS per instance) is what Jetstress aims at; the database IOPS a
    storage system achieves come from the closed loop. A thread spends time outside its reads
    (transaction processing, log commits): by Little's law on Figure 16, 32 threads reading 630.229
    pages/s at 17 ms each spend 33.8 ms per read outside the storage, the ``think`` time of each thread
    (a fit on Figure 16, the four-tile run's first instance).
    """
    db_reads, db_writes, log_writes = 630.229, 481.876, 252.745
    read_lat = 17e-3  # Figure 16: Avg. Disk sec/Read of the database
    think = threads / db_reads - read_lat
    read_pct = 100 * db_reads / (db_reads + db_writes)
    log_per_db_io = log_writes / (db_reads + db_writes)
    target = mailboxes * iops_per_mailbox
    db = AccessSpec(
        name="Jetstress DB", sizes=(SizeShare(size=EXCHANGE_2007_PAGE, pct=100),),
        read_pct=round(read_pct, 2), random_pct=100, align=EXCHANGE_2007_PAGE,
    )  # fmt: skip
    log = AccessSpec(
        name="Jetstress log", sizes=(SizeShare(size=5632, pct=100),), read_pct=0, random_pct=0, align=512
    )
    fig16 = f"{_DS5020}, Appendix, Figure 16"
    params = {
        "mailboxes": _doc(mailboxes, "count", f"{_DS5020}, Appendix: 'Mailboxes – 2,280'"),
        "iops_per_mailbox": _doc(iops_per_mailbox, "IOPS/mailbox", f"{_DS5020}, Appendix: 'IOPS per mailbox – 0.5'"),
        "target_iops": Param(target, "IOPS", "document", f"{fig16}: 'Target I/O per Second 1140' = 2,280 x 0.5"),
        "threads": _doc(threads, "count", f"{_DS5020}, Appendix: 'Thread – 32'"),
        "db_read_pct": Param(round(read_pct, 2), "%", "document", f"{fig16}: DB reads 630.229/s and writes 481.876/s"),
        "log_writes_per_db_io": Param(round(log_per_db_io, 4), "ratio", "document",
                                      f"{fig16}: log writes 252.745/s per 1,112.1 DB IOs/s"),
        "log_write_size": Param(5632, "B", "document", f"{fig16}: log write size 5,666.955 B, rounded to sectors"),
        "db_io_size": Param(8, "KiB", "assumption", "Exchange 2007 database page (ESE 08.01.0240 in Figure 16) "
                            "is 8 KiB; the report does not state the IO size"),
        "thread_think": Param(round(think * 1e3, 3), "ms", "fit", f"{fig16}, by Little's law: 32 threads / "
                              "630.229 DB reads/s minus the 17 ms DB read latency: time a thread spends per read "
                              "outside the storage (the database writes are asynchronous and hold no thread)",
                              fitted_on=_JETSTRESS_FITTED_ON),
    }  # fmt: skip
    streams = (
        Stream(f"{name} db", db_volume, db, db_span, workers=threads, outstanding=1, think=think, split_ops=True,
               async_writes=True),
        Stream(f"{name} log", log_volume, log, log_span, rate=target * log_per_db_io),
    )
    return ApplicationWorkload(name, streams, params, "database IOPS come from the closed loop of threads")


def loadgen_outlook_200(
    name: str = "exchange", *, mailboxes: int = 400, volume: str = "exchange", span: int = 4 * 450 * 10**9
) -> ApplicationWorkload:
    """Exchange LoadGen 2010 with the Outlook_200 action profile (NexGen study: 400 mailboxes in four
    databases of 100). Open loop at mailboxes x IOPS per mailbox, 32 KiB database pages (Exchange 2010),
    random, 60 % reads."""
    per_mailbox = 0.24
    spec = AccessSpec(name="Exchange 2010 DB", sizes=(SizeShare(size=32 * 1024, pct=100),), read_pct=60,
                      random_pct=100, align=32 * 1024)  # fmt: skip
    params = {
        "mailboxes": _doc(mailboxes, "count", f"{_NEXGEN}, Exchange: '100 users per database (400 total)'"),
        "action_profile_messages_per_day": _doc(200, "count", f"{_NEXGEN}, Exchange: 'Action profile: Outlook_200'"),
        "iops_per_mailbox": _assume(per_mailbox, "IOPS/mailbox", "Microsoft's Exchange 2010 mailbox storage "
                                    "sizing table: 200 messages/day, stand-alone database -> 0.24 IOPS per mailbox; "
                                    "not stated in the study"),
        "read_pct": _assume(60, "%", "Exchange 2010 database read/write ratio about 3:2 for this profile "
                            "(Microsoft sizing guidance); not stated in the study"),
    }  # fmt: skip
    stream = Stream(name, volume, spec, span, rate=mailboxes * per_mailbox)
    return ApplicationWorkload(name, (stream,), params)


# -- Oracle Orion --------------------------------------------------------------------------------------

ORION_SMALL = AccessSpec(name="Orion small", sizes=(SizeShare(size=8192, pct=100),), read_pct=70,
                         random_pct=100, align=8192)  # fmt: skip
ORION_LARGE = AccessSpec(name="Orion large", sizes=(SizeShare(size=1024 * 1024, pct=100),), read_pct=70,
                         random_pct=100, align=1024 * 1024)  # fmt: skip
#: The DS5020 Orion target, the raw device ``\\\\.\\f:`` (Figure 17): the whole 557.793 GB (GiB) Oracle LUN
#: (Figure 20). Figure 17 prints its size as 1,924,071,424 B, which is that size modulo 2**32 (Orion
#: 10.2 printed it as a 32-bit number): 139 x 2**32 + 1,924,071,424 B = 557.792 GiB. Table 3's minimum
#: latency (5.42 ms at one outstanding IO, reads and writes alike) is a 15K drive's full-stroke random
#: IO time, not that of a 1.8 GiB region.
ORION_DS5020_SPAN = 139 * 2**32 + 1_924_071_424

_ORION_PARAMS = {
    "small_io_size": _doc(8, "KiB", f"{_DS5020}, Appendix: 'Small IO size: 8 KB'"),
    "large_io_size": _doc(1024, "KiB", f"{_DS5020}, Appendix: 'Large IO size: 1024 KB'"),
    "write_pct": _doc(30, "%", f"{_DS5020}, Appendix: 'Write: 30%'"),
    "num_disks": _doc(5, "count", f"{_DS5020}, Appendix: 'Num_disks: 5'"),
}


def orion_small(
    name: str = "orion small", *, outstanding: int = 25, volume: str = "oracle", span: int = ORION_DS5020_SPAN
) -> ApplicationWorkload:
    """Orion small random IO (OLTP): ``outstanding`` 8 KiB random IOs, 30 % writes, over the test target
    (the whole Oracle LUN in the DS5020 run, :data:`ORION_DS5020_SPAN`). Orion's basic matrix peaks at
    25 outstanding (5 x num_disks)."""
    params = dict(_ORION_PARAMS, outstanding_small=_doc(outstanding, "count", f"{_DS5020}, Figure 17: small "
                  "points 1..25 (5 x Num_disks); peak IOPS at Small=25"))  # fmt: skip
    return ApplicationWorkload(name, (Stream(name, volume, ORION_SMALL, span, workers=outstanding),), params)


def orion_large(
    name: str = "orion large", *, outstanding: int = 9, volume: str = "oracle", span: int = ORION_DS5020_SPAN
) -> ApplicationWorkload:
    """Orion large random IO (DSS): ``outstanding`` 1 MiB random IOs, 30 % writes, over the test target
    (:data:`ORION_DS5020_SPAN`; the DS5020 run's peak MB/s was at Large=9 of its 0..10 columns)."""
    params = dict(_ORION_PARAMS, outstanding_large=_doc(outstanding, "count", f"{_DS5020}, Figure 17: maximum "
                  "MBPS at Large=9 of 'Large Columns: 0..10'"))  # fmt: skip
    return ApplicationWorkload(name, (Stream(name, volume, ORION_LARGE, span, workers=outstanding),), params)


def orion_basic_matrix(num_disks: int = 5) -> list[tuple[int, int]]:
    """Orion's ``-matrix basic`` points as (small outstanding, large outstanding): small alone at 1 ..
    5 x num_disks, then large alone at 0 .. 2 x num_disks (36 points for 5 disks, as in Figure 17)."""
    if isinstance(num_disks, bool) or not isinstance(num_disks, int) or num_disks < 1:
        raise ValueError(f"num_disks must be an integer >= 1, got {num_disks!r}")
    return [(s, 0) for s in range(1, 5 * num_disks + 1)] + [(0, q) for q in range(0, 2 * num_disks + 1)]


# -- Iometer -------------------------------------------------------------------------------------------


def iometer_web_server(
    name: str = "web", *, workers: int = 4, outstanding: int = 4, volume: str = "web", span: int = 557 * 10**9
) -> ApplicationWorkload:
    """Iometer's web-server access spec as in the DS5020 appendix (Figure 18): four workers, four
    outstanding IOs each, 100 % random reads over the size mix of :data:`IOMETER_WEB_SERVER`."""
    params = {
        "workers": _doc(workers, "count", f"{_DS5020}, Appendix: 'Four workers, four outstanding I/Os'"),
        "outstanding": _doc(outstanding, "count", f"{_DS5020}, Appendix: 'Four workers, four outstanding I/Os'"),
        "read_pct": _doc(100, "%", f"{_DS5020}, Appendix: '100% random reads, assorted block sizes'"),
        "mean_io_size": Param(round(IOMETER_WEB_SERVER.mean_size / 1024, 2), "KiB", "document",
                              f"{_DS5020}, Figure 18 size mix (rows ds5020-web-mix-*)"),
    }  # fmt: skip
    stream = Stream(name, volume, IOMETER_WEB_SERVER, span, workers=workers, outstanding=outstanding)
    return ApplicationWorkload(name, (stream,), params)


SCAN_256K = AccessSpec(name="256 KB sequential read", sizes=(SizeShare(size=256 * 1024, pct=100),),
                       read_pct=100, random_pct=0, align=512)  # fmt: skip


def sequential_scan(
    name: str = "scan",
    *,
    workers: int = 1,
    outstanding: int = 1,
    volume: str = "scan",
    span: int = 557 * 10**9,
) -> ApplicationWorkload:
    """The DS5020 scan/read stream: one worker, one outstanding 256 KiB sequential read."""
    params = {
        "workers": _doc(workers, "count", f"{_DS5020}, Appendix: 'One worker, one outstanding I/O'"),
        "io_size": _doc(256, "KiB", f"{_DS5020}, Appendix: '100% 256 KB sequential reads'"),
    }
    stream = Stream(name, volume, SCAN_256K, span, workers=workers, outstanding=outstanding)
    return ApplicationWorkload(name, (stream,), params)


SEQ_READ_1M = AccessSpec(name="1 MB sequential read", sizes=(SizeShare(size=1024 * 1024, pct=100),),
                         read_pct=100, random_pct=0, align=512)  # fmt: skip


def iometer_sequential_read(
    name: str = "seq read",
    *,
    workers: int = 4,
    outstanding: int = 16,
    volume: str = "lun",
    span: int = 557 * 10**9,
) -> ApplicationWorkload:
    """The DS5020 characterization per LUN: four workers, each with sixteen outstanding 1 MiB sequential
    reads and its own sequential position from the start of the LUN (streams ``"<name> worker k"``).

    Iometer keeps the sequential position per worker and target: each worker's target starts at its
    starting sector and advances by its own transfers (Iometer source, ``src/IOTargetDisk.cpp``:
    ``offset``, ``starting_position``), so four workers on one LUN read the same blocks, one after
    another, rather than a quarter of the LUN each."""
    params = {
        "workers": _doc(workers, "count", f"{_DS5020}, Appendix, Characterization: 'Four workers'"),
        "outstanding": _doc(outstanding, "count", f"{_DS5020}, Appendix: 'sixteen I/O's per physical drive'"),
        "io_size": _doc(1, "MB", f"{_DS5020}: 'Maximum throughput was measured using 1 MB sequential reads'"),
    }
    return ApplicationWorkload(
        name, _iometer_workers(name, volume, SEQ_READ_1M, span, workers, outstanding), params,
        "each worker reads the LUN from its start on its own",
    )


def _iometer_workers(
    name: str, volume: str, spec: AccessSpec, span: int, workers: int, outstanding: int
) -> tuple[Stream, ...]:
    """One stream per Iometer worker on one target, each with its own sequential position."""
    return tuple(
        Stream(f"{name} worker {k}", volume, spec, span, workers=1, outstanding=outstanding)
        for k in range(1, workers + 1)
    )


SEQ_READ_512 = AccessSpec(name="512 B sequential read", sizes=(SizeShare(size=512, pct=100),),
                          read_pct=100, random_pct=0, align=512)  # fmt: skip


def iometer_cache_reads(
    name: str = "cache reads", *, workers: int = 4, outstanding: int = 16, volume: str = "lun",
    span: int = 557 * 10**9,
) -> ApplicationWorkload:
    """An IOPS-from-cache test per LUN: the characterization's workers (four, sixteen outstanding IOs
    each, each from the start of the LUN) reading 512 B sequentially, so nearly every read finds its
    block in the controller's cache. The DS5020 study reports IOPS from cache (Table 5) without its
    access specification; the transfer size is an assumption."""
    params = {
        "workers": _doc(workers, "count", f"{_DS5020}, Appendix, Characterization: 'Four workers'"),
        "outstanding": _doc(outstanding, "count", f"{_DS5020}, Appendix: 'sixteen I/O's per physical drive'"),
        "io_size": _assume(512, "B", "not stated for Table 5's IOPS from cache; cache IOPS tests read the "
                           "smallest transfer (512 B) sequentially so that reads hit the controller's cache"),
    }  # fmt: skip
    return ApplicationWorkload(
        name, _iometer_workers(name, volume, SEQ_READ_512, span, workers, outstanding), params,
        "each worker reads the LUN from its start on its own, 512 B at a time",
    )


SEQ_WRITE_1M = AccessSpec(name="1 MB sequential write", sizes=(SizeShare(size=1024 * 1024, pct=100),),
                          read_pct=0, random_pct=0, align=512)  # fmt: skip


def backup_stream(
    name: str = "backup", *, streams: int = 1, volume: str = "backup", span: int = 1000 * 10**9
) -> ApplicationWorkload:
    """Backup-like writing: ``streams`` streams of 1 MiB sequential writes, one outstanding IO each (none
    of the studies runs one; every number here is an assumption)."""
    params = {
        "streams": _assume(streams, "count", "the user's choice: backup jobs writing at once"),
        "io_size": _assume(1, "MiB", "backup software writes large sequential blocks; 1 MiB as the four-corners "
                           "sequential test uses"),
    }  # fmt: skip
    stream = Stream(name, volume, SEQ_WRITE_1M, span, workers=streams, outstanding=1)
    return ApplicationWorkload(name, (stream,), params)


def vsan_iometer(name: str = "iometer", *, vms: int = 64, volume: str = "datastore") -> ApplicationWorkload:
    """The Virtual SAN test: one Iometer worker per VM, queue depth 1, 4 KiB 70 % read 100 % random,
    over each VM's 7.5 GB data disk (one closed loop of ``vms`` workers over ``vms`` x 7.5 GB)."""
    span_per_vm = 7_500_000_000
    params = {
        "vms": _doc(vms, "count", f"{_VSAN}: tests at 4, 8, 16, 32 and 64 VMs"),
        "queue_depth": _doc(1, "count", f"{_VSAN}: 'a single worker with a queue depth of one on each virtual machine'"),
        "read_pct": _doc(70, "%", f"{_VSAN}: '100% Random, 70% Read (30% Write) with a 4K transfer size'"),
        "span_per_vm": _doc(7.5, "GB", f"{_VSAN}: 'The span size is set to 7.5 GB'"),
    }  # fmt: skip
    stream = Stream(name, volume, IOMETER_4K_70_30_RANDOM, vms * span_per_vm, workers=vms, outstanding=1)
    return ApplicationWorkload(name, (stream,), params)


# -- OLTP: DVD Store -----------------------------------------------------------------------------------

#: SQL Server reads and writes 8 KiB pages.
SQL_PAGE = AccessSpec(name="SQL Server 8K OLTP", sizes=(SizeShare(size=8192, pct=100),), read_pct=90,
                      random_pct=100, align=8192)  # fmt: skip


def dvd_store(
    name: str = "oltp",
    *,
    vms: int = 4,
    threads: int = 12,
    think: float = 0.1,
    ios_per_order: int = 18,
    volume: str = "oltp",
    span: int = 4 * 50 * 10**9,
) -> ApplicationWorkload:
    """DVD Store 2 OLTP as in the NexGen study: ``vms`` SQL Server VMs with ``threads`` driver threads
    each; a thread places an order (``ios_per_order`` 8 KiB random IOs one after another), then thinks
    ``think`` seconds. Orders per minute = completed IOs / ``ios_per_order`` x 60.

    ``ios_per_order`` is fitted (by arithmetic) on the study's scenario 2: about 10,000 host-cache
    IOPS at 35,000-40,000 OPM (the midpoint, 625 orders/s), where the warm host cache serves every
    read and no write: 10,000 / (90 % reads x 625) = 17.8, so 18 IOs per order.
    """
    params = {
        "vms": _doc(vms, "count", f"{_NEXGEN}, Figure 13: 'SQL01-04'"),
        "threads_per_vm": _doc(threads, "count", f"{_NEXGEN}, DVD Store: 'Number of threads per VM: 12'"),
        "think_time": _doc(think * 1e3, "ms", f"{_NEXGEN}, DVD Store: 'Think time: 100 milliseconds' "
                           "(scenario 1; 0 ms in scenario 2)"),
        "ios_per_order": _fit_default(ios_per_order, 18, "count", f"{_NEXGEN}, scenario 2: ~10,000 ioTurbine "
                                      "cache IOPS (reads only: the warm cache serves the reads, writes go through) "
                                      "at 35,000-40,000 OPM -> 10,000 / (90 % reads x 37,500 / 60) = 17.8, rounded "
                                      "to 18 IOs per order", IOS_PER_ORDER_FITTED_ON),
        "read_pct": _assume(90, "%", "DVD Store is browse-heavy (3 browses per purchase); SQL Server OLTP "
                            "reads about 90 % of its page IOs; not stated in the study"),
        "database_size": _doc(50, "GB", f"{_NEXGEN}: 'the 50 GB test database'"),
    }  # fmt: skip
    gap = BurstThink(ios_per_order, think) if think > 0 else 0.0
    stream = Stream(name, volume, SQL_PAGE, span, workers=vms * threads, outstanding=1, think=gap)
    return ApplicationWorkload(name, (stream,), params, f"orders per minute = IOPS x 60 / {ios_per_order}")


# -- VDI -------------------------------------------------------------------------------------------------

#: Virtual desktop IO as Atlantis characterises it: small random IOs, 80 % writes.
VDI_STEADY = AccessSpec(name="VDI steady state", sizes=(SizeShare(size=4096, pct=100),), read_pct=20,
                        random_pct=100, align=4096)  # fmt: skip
#: A Windows 7 boot: mostly reads of the OS image.
VDI_BOOT = AccessSpec(name="VDI boot", sizes=(SizeShare(size=4096, pct=100),), read_pct=90, random_pct=100,
                      align=4096)  # fmt: skip


def boot_storm(
    name: str = "boot storm",
    *,
    desktops: int = 600,
    power_on_rate: float = 2.0,
    ios_per_boot: float = 13_660.0,
    boot_duration: float = 12.0,
    start: float = 0.0,
    volume: str = "vdi",
    span: int = 24 * 10**9,
) -> ApplicationWorkload:
    """``desktops`` desktops powered on by the broker at ``power_on_rate`` per second; each issues
    ``ios_per_boot`` IOs spread evenly over ``boot_duration`` seconds (open loop), from ``start`` s.

    The offered rate ramps up over one boot, holds at ``power_on_rate x ios_per_boot`` while desktops
    are powered on, and ramps down over the last boot; the storm lasts ``desktops / power_on_rate +
    boot_duration`` seconds. IOs land on the master image (24 GB), 90 % reads.
    """
    if desktops < 1 or not power_on_rate > 0 or not ios_per_boot > 0 or not boot_duration > 0:
        raise ValueError(
            "boot_storm needs desktops >= 1 and positive power_on_rate, ios_per_boot, boot_duration"
        )
    powering = desktops / power_on_rate
    peak = power_on_rate * ios_per_boot  # IO/s with power_on_rate x boot_duration desktops booting
    # desktops booting at once rise for min(powering, boot) s, hold, and fall as the first ones finish
    ramp = min(boot_duration, powering)
    hold = abs(powering - boot_duration)
    phases = []
    if start > 0:
        phases.append(Phase("before", start, 0.0))
    phases.append(Phase("ramp up", ramp, 0.0, ramp / boot_duration))
    if hold > 0:
        phases.append(Phase("storm", hold, ramp / boot_duration))
    phases.append(Phase("ramp down", ramp, ramp / boot_duration, 0.0))
    phases.append(Phase("after", 1e9, 0.0))
    params = {
        "desktops": _doc(desktops, "count", f"{_NEXGEN}: 'a 600-count boot storm'"),
        "power_on_interval": _assume(round(1 / power_on_rate, 6), "s", "seconds between two desktops powered on by "
                                     "the broker (1 / power_on_rate): not stated in either study"),
        "ios_per_boot": _fit_default(ios_per_boot, 13_660.0, "count", f"{_ILIO}, 7.1.5: Tier-1 peak 6,028 IOPS x "
                                     "170 s boot of 75 desktops / 75 = 13,660 IOs per desktop boot (an upper "
                                     "estimate: peak, not mean)", IOS_PER_BOOT_FITTED_ON),
        "boot_duration": _assume(boot_duration, "s", f"{_ILIO}, 7.1.5: a single desktop boots in about 12 s"),
        "read_pct": _assume(90, "%", "Windows boot reads the OS image; writes are page file and logs"),
    }  # fmt: skip
    stream = Stream(name, volume, VDI_BOOT, span, rate=peak, schedule=PhaseSchedule(phases))
    notes = f"peak {peak * ramp / boot_duration:,.0f} IOPS; storm length {powering + boot_duration:,.0f} s"
    return ApplicationWorkload(name, (stream,), params, notes)


def login_vsi(
    name: str = "login vsi",
    *,
    desktops: int = 600,
    iops_per_desktop: float = 10.0,
    launch_interval: float = 20.0,
    start: float = 0.0,
    ramp: bool = True,
    volume: str = "vdi",
    span: int = 600 * 4 * 10**9,
) -> ApplicationWorkload:
    """Login VSI steady state: ``desktops`` x ``iops_per_desktop`` open-loop VDI IOs (4 KiB, 80 %
    writes, random over the change disks). With ``ramp`` the sessions log on one every
    ``launch_interval`` seconds from ``start``, so the rate ramps up over desktops x launch_interval."""
    phases = []
    if start > 0:
        phases.append(Phase("before", start, 0.0))
    if ramp:
        phases.append(Phase("logons", desktops * launch_interval, 0.0, 1.0))
    phases.append(Phase("steady", 1e9, 1.0))
    params = {
        "desktops": _doc(desktops, "count", f"{_NEXGEN}, Login VSI: 'Number of sessions: 600'"),
        "iops_per_desktop": _doc(iops_per_desktop, "IOPS/desktop", f"{_NEXGEN}, Login VSI: 'About 10 to 15 IOPS per "
                                 "desktop at steady state, 100 percent concurrency' (low end)"),
        "launch_interval": _doc(launch_interval, "s", f"{_NEXGEN}, Login VSI: 'Launch interval: 20 seconds'"),
        "write_pct": _assume(80, "%", "Atlantis: VDI workloads are 'random and write intensive (80% write, 20% "
                             "read)'; not stated in the studies"),
        "io_size": _assume(4, "KiB", f"{_ILIO}, 7.1.3: Iometer MB/s / IOPS = 4.0 KiB for the VDI pattern"),
    }  # fmt: skip
    sched = PhaseSchedule(phases) if len(phases) > 1 else None
    stream = Stream(name, volume, VDI_STEADY, span, rate=desktops * iops_per_desktop, schedule=sched)
    return ApplicationWorkload(name, (stream,), params)


ILIO_EXTRA_WRITE = AccessSpec(name="ILIO extra writes", sizes=(SizeShare(size=24 * 1024, pct=100),), read_pct=0,
                              random_pct=100, align=512, burst_length=3, burst_delay=0.070)  # fmt: skip


def ilio_extra_writes(
    name: str = "extra writes", *, desktops: int = 75, volume: str = "vdi", span: int = 75 * 32 * 10**9
) -> ApplicationWorkload:
    """The ILIO study's extra Iometer load: per desktop one worker issuing bursts of 3 random 24 KiB
    writes, one outstanding, with a 70 ms transfer delay before each burst. The delay ends on a tick of
    the desktop's Windows timer (``timer_tick``, :class:`BurstThink`): 70 ms takes 5 ticks, and as each
    burst starts just after a tick, a burst of 3 fast IOs repeats every 5 x 15.625 = 78.125 ms, 38.4
    IOPS per desktop, the study's 'further 38 random write IOPs per session' (without the tick: at most
    3 / 0.070 = 42.9)."""
    fig = f"{_ILIO}, 7.1.4 Edit Access Specification screenshot"
    params = {
        "desktops": _doc(desktops, "count", f"{_ILIO}, 7.1.6: 75 sessions on one host"),
        "burst_length": _doc(3, "count", f"{fig}: 'Burst L[ength] ... 3 I/Os'"),
        "burst_delay": _doc(70, "ms", f"{fig}: 'Transfer De[lay] 70 ms'"),
        "write_pct": _doc(100, "%", f"{fig}: '100% Write 0% Read'"),
        "random_pct": _doc(100, "%", f"{fig}: '100% Random'"),
        "io_size": _assume(24, "KiB", f"{fig}: the size is garbled in the extracted text; the list row reads "
                           "'0MB 24KB 0B' and the spinners '0' MB, '24' KB, '0' Bytes, so 24 KiB"),
        "target_iops_per_desktop": _doc(38, "IOPS/desktop", f"{_ILIO}: 'a further 38 random write IOPs per session'"),
        "timer_tick": _assume(15.625, "ms", "Windows' default timer interrupt period (64 Hz), on which a wait with "
                              "a timeout ends; Iometer waits for its transfer delay that way (src/IOGrunt.cpp: "
                              "Asynchronous_Delay -> Complete_IO(timeout)) and its source never raises the timer "
                              "resolution (no timeBeginPeriod); recalled, not stated in the document"),
    }  # fmt: skip
    think = BurstThink(3, 0.070, timer_tick=params["timer_tick"].si)
    stream = Stream(name, volume, ILIO_EXTRA_WRITE, span, workers=desktops, outstanding=1, think=think)
    return ApplicationWorkload(name, (stream,), params)


#: The Atlantis standard VDI Iometer pattern as the ILIO study ran it against the EqualLogic array.
ATLANTIS_VDI = AccessSpec(name="Atlantis VDI pattern", sizes=(SizeShare(size=4096, pct=100),), read_pct=20,
                          random_pct=100, align=4096)  # fmt: skip


def atlantis_vdi_iometer(
    name: str = "atlantis vdi",
    *,
    workers: int = 4,
    outstanding: int = 1,
    volume: str = "vdi",
    span: int = 32 * 10**9,
) -> ApplicationWorkload:
    """Iometer with the Atlantis VDI access pattern (ILIO study 7.1.3): four workers on one desktop VM,
    4 KiB random IOs, 80 % writes, over the desktop's 32 GB disk."""
    params = {
        "workers": _doc(workers, "count", f"{_ILIO}, 7.1.3 screenshot: 'Worker 1 Worker 2 Worker 3 Worker 4'"),
        "io_size": Param(4, "KiB", "document", f"{_ILIO}, 7.1.3: 7.56 MB/s / 1,934.30 IOPS = 4.0 KiB"),
        "write_pct": _assume(80, "%", "the pattern is defined in a blog post the study links but does not quote; "
                             "Atlantis describes VDI IO as '80% write, 20% read', random"),
        "outstanding": _assume(outstanding, "count", "not stated; 1,934 IOPS x 1.075 ms read latency ~ 2 IOs in "
                               "flight, consistent with four QD1 workers and slower writes"),
        "span": _doc(32, "GB", f"{_ILIO}: desktop 'Virtual Hard Disk Size 32GB'"),
    }  # fmt: skip
    stream = Stream(
        name, volume, ATLANTIS_VDI, span, workers=workers, outstanding=outstanding, split_ops=True
    )
    return ApplicationWorkload(name, (stream,), params)
