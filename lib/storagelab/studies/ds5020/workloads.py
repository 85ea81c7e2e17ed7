"""The DS5020 study's workloads: the Table 1 tiles, the characterization streams and the cache IOPS test,
and the application generators they are built from that no other study runs (Jetstress, Orion, the
characterization's Iometer sequential reads and the cache reads; the web server and the scan are in
:mod:`storagelab.workloads.catalogue`)."""

from __future__ import annotations

from storagelab.architectures.parameters import ParamSet
from storagelab.provenance import CHOICE_UNIT, Param
from storagelab.uncertainty.distributions import Choice, LogUniform, Uniform
from storagelab.workloads.access_spec import AccessSpec, SizeShare
from storagelab.workloads.application import (
    ApplicationWorkload,
    Stream,
    combine,
    documented,
    documented_default,
    need_count,
    need_positive,
)
from storagelab.workloads.catalogue import iometer_web_server, sequential_scan

_DOC = "002_3dbf0d9df4c2366f.txt (ESG Lab, IBM DS5020)"

#: Orion's Table 3 maxima come from different points of its matrix: 25 small IOs outstanding (IOPS),
#: 9 large (MB/s), 1 small (minimum latency).
ORION_IOPS, ORION_MBPS, ORION_MIN_LAT = ("small", 25), ("large", 9), ("small", 1)

#: Orion's time per matrix point, s (Appendix: 'Duration for each Data Point: 150 seconds').
ORION_POINT_S = 150.0
#: Jetstress's logged performance run, s: Figure 16's log, 'Performance logging begins' at 3:41:50 PM and
#: 'Performance logging ends' at 5:43:56 PM. Its averages (IOPS, Avg. Disk sec/Read) are over this time.
JETSTRESS_LOGGED_S = 2 * 3600 + 2 * 60 + 6.0
#: The Orion point that stands for the matrix's large phase (Large = 1..10, Figure 17) in the tile runs'
#: Jetstress figures: the middle column.
ORION_LARGE_PHASE = ("large", 5)


def orion_large_share(num_disks: int = 5) -> float:
    """Share of Jetstress's logged run (:data:`JETSTRESS_LOGGED_S`) during which Orion issues large IOs:
    the basic matrix's large points with IOs outstanding (Large = 1 .. 2 x num_disks, each
    :data:`ORION_POINT_S`). The study ran the four workloads in parallel, Jetstress the longest ('Each of
    the four workloads ran in parallel, with the Jetstress e-mail test taking the longest to complete'),
    so Orion's whole matrix (36 x 150 s = 90 min) falls inside Jetstress's two-hour run; the rest of that
    run sees Orion's small points, its idle point, or no Orion."""
    large = [q for s, q in orion_basic_matrix(num_disks) if s == 0 and q > 0]
    return len(large) * ORION_POINT_S / JETSTRESS_LOGGED_S


#: Orion tests running in parallel per tile. Figure 17's caption: 'It shows the performance for one of
#: eight Orion tests running in parallel. Specifically, this report was created by the Orion utility
#: running on a virtual machine within the fourth tile of the four tile test': eight tests over the four
#: tiles, whose only Oracle volume is their four-drive RAID-10 LUN (Table 1: four Oracle LUNs), so two
#: tests per tile against the same LUN, each with the same command line (so at the same matrix point at
#: the same time). Each reports its own figures: Figure 17's report (882 IOPS, 108.27 MB/s, 5.42 ms) is
#: one test's, and it is Table 3's tile row.
ORION_TESTS_PER_TILE = 2


def orion_test_name(tile: int, test: int = 1) -> str:
    """The name of Orion test ``test`` (1-based) of tile ``tile`` in :func:`tile_workload`: its streams'
    class prefix in results (``"orion 3.1"``)."""
    return f"orion {tile}.{test}"


def tile_workload(
    tiles: int, orion: tuple[str, int] = ORION_IOPS, orion_tests: int = ORION_TESTS_PER_TILE
) -> ApplicationWorkload:
    """``tiles`` tiles of the mixed workload: Jetstress, ``orion_tests`` Orion tests in parallel (each at
    the matrix point ``(kind, outstanding)``, :data:`ORION_TESTS_PER_TILE`), the Iometer web server and
    the 256 KB scan, each against its own tile's volumes. Orion test ``j`` of tile ``t`` is named
    :func:`orion_test_name` ``(t, j)``."""
    need_count("tile_workload", "tiles", tiles)
    need_count("tile_workload", "orion_tests", orion_tests)
    kind, q = orion
    if kind not in ("small", "large"):
        raise ValueError(f"tile_workload: orion's kind must be 'small' or 'large', got {kind!r}")
    parts = []
    for t in range(1, tiles + 1):
        make = orion_small if kind == "small" else orion_large
        oracle = [
            make(orion_test_name(t, j), outstanding=q, volume=f"oracle-{t}", parallel_tests=orion_tests)
            for j in range(1, orion_tests + 1)
        ]
        parts += [
            jetstress(f"jetstress {t}", db_volume=f"exchange-db-{t}", log_volume=f"exchange-log-{t}"),
            *oracle,
            iometer_web_server(f"web {t}", volume=f"web-{t}"),
            sequential_scan(f"scan {t}", volume=f"scan-{t}"),
        ]
    return combine(f"{tiles}-tile mix", parts)


def characterization_workload() -> ApplicationWorkload:
    """Eight LUNs, each read by four workers with 16 outstanding 1 MB sequential reads."""
    return combine(
        "characterization", [iometer_sequential_read(f"seq {i}", volume=f"lun-{i}") for i in range(1, 9)]
    )


def cache_iops_workload() -> ApplicationWorkload:
    """Table 5's IOPS from cache, as the model runs it: the characterization's eight LUNs and workers
    reading 512 B sequentially (the study does not give the access specification)."""
    return combine("cache IOPS", [iometer_cache_reads(f"cache {i}", volume=f"lun-{i}") for i in range(1, 9)])


# -- Exchange: Jetstress --------------------------------------------------------------------------------

#: Exchange 2007 (ESE 08.01, as in the DS5020 Jetstress report) reads and writes 8 KiB database pages.
EXCHANGE_2007_PAGE = 8 * 1024


#: Dataset rows whose simulated value the Jetstress thread think time sets: Figure 16's database read rate,
#: which is Table 2's four-tile IOPS (the fit makes 32 threads read at that rate when the read latency is
#: Figure 16's). The fit's input, Figure 16's read latency (Table 2's four-tile latency), is not set by it:
#: the simulation gives the latency, so that claim stays predicted (the source text names it).
_JETSTRESS_FITTED_ON = ("ds5020-f16-db-reads", "ds5020-t2-iops-t4")
#: Figure 16: the database reads (pages/s), database writes (pages/s) and log writes (/s) of the run.
_F16_DB_READS, _F16_DB_WRITES, _F16_LOG_WRITES = 630.229, 481.876, 252.745
#: Figure 16: Avg. Disk sec/Read of the database (s).
_F16_DB_READ_LAT = 17e-3
#: The threads of the run the think time is fitted on (the study's 'Thread – 32').
JETSTRESS_THREADS = 32
#: A Jetstress thread's time per database read outside the storage (s), fitted by Little's law on Figure
#: 16 at the study's 32 threads: 32 / 630.229 reads/s - 17 ms. A per-thread quantity: it is held when the
#: thread count varies (the database IOPS then follow from the closed loop).
JETSTRESS_THREAD_THINK_S = JETSTRESS_THREADS / _F16_DB_READS - _F16_DB_READ_LAT

#: The name the Jetstress instances' parameters are drawn under (``ParamSet``): one name for every instance
#: and tile, since they all run the same Jetstress configuration (one draw of, say, the think time serves
#: all four tiles' instances alike).
JETSTRESS_PARAMS = "ds5020 jetstress"
#: The name the cache-reads test's parameters are drawn under, the same for the eight LUNs' tests.
CACHE_READS_PARAMS = "ds5020 iometer cache reads"


def _thread_think_s(p: Param) -> float:
    """The think time (s) the Jetstress threads use: the fit's unrounded value while ``p`` holds the
    declared one (the parameter shows it to 0.001 ms), otherwise (a draw or a caller's value) ``p``'s."""
    declared = round(JETSTRESS_THREAD_THINK_S * 1e3, 3)
    return JETSTRESS_THREAD_THINK_S if p.unit == "ms" and p.value == declared else p.si


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
    (a fit on Figure 16, the four-tile run's first instance, :data:`JETSTRESS_THREAD_THINK_S`). The think
    time is a thread's own: with another ``threads`` (any count >= 1) each thread keeps it, and the database
    IOPS follow from the closed loop.
    """
    need_count("jetstress", "threads", threads)
    need_count("jetstress", "mailboxes", mailboxes)
    need_positive("jetstress", "iops_per_mailbox", iops_per_mailbox, "IOPS")
    db_reads, db_writes, log_writes = _F16_DB_READS, _F16_DB_WRITES, _F16_LOG_WRITES
    think = JETSTRESS_THREAD_THINK_S  # the fit (s); the streams below read it as drawn, if drawn
    read_pct = 100 * db_reads / (db_reads + db_writes)
    log_per_db_io = log_writes / (db_reads + db_writes)
    target = mailboxes * iops_per_mailbox
    log = AccessSpec(
        name="Jetstress log", sizes=(SizeShare(size=5632, pct=100),), read_pct=0, random_pct=0, align=512
    )
    fig16 = f"{_DOC}, Appendix, Figure 16"
    params = {
        "mailboxes": documented_default(mailboxes, 2280, "count", f"{_DOC}, Appendix: 'Mailboxes – 2,280'"),
        "iops_per_mailbox": documented_default(iops_per_mailbox, 0.5, "IOPS/mailbox", f"{_DOC}, Appendix: 'IOPS per mailbox – 0.5'"),
        "target_iops": Param(target, "IOPS", "document", f"{fig16}: 'Target I/O per Second 1140' = 2,280 x 0.5"),
        "threads": documented_default(threads, JETSTRESS_THREADS, "count", f"{_DOC}, Appendix: 'Thread – 32'"),
        "db_read_pct": Param(round(read_pct, 2), "%", "document", f"{fig16}: DB reads 630.229/s and writes 481.876/s"),
        "log_writes_per_db_io": Param(round(log_per_db_io, 4), "ratio", "document",
                                      f"{fig16}: log writes 252.745/s per 1,112.1 DB IOs/s"),
        "log_write_size": Param(5632, "B", "document", f"{fig16}: log write size 5,666.955 B, rounded to sectors"),
        "db_io_size": Param(8, "KiB", "assumption", "Exchange 2007 database page (ESE 08.01.0240 in Figure 16) "
                            "is 8 KiB; the report does not state the IO size. Uncertainty: one of 8, 16 or 32 KiB "
                            "(weights 4, 1, 1): ESE 08.01 reads and writes single 8 KiB pages, the most likely; "
                            "ESE may write adjacent dirty pages together (16 KiB) and Exchange 2010's ESE uses "
                            "32 KiB pages, the largest an Exchange database IO of the era takes as its unit",
                            uncertainty=Choice((8, 16, 32), (4, 1, 1))),
        "thread_think": Param(round(think * 1e3, 3), "ms", "fit", f"{fig16}, by Little's law: 32 threads / "
                              "630.229 DB reads/s minus the 17 ms DB read latency (rows ds5020-f16-db-read-lat and "
                              "ds5020-t2-latency-t4: the fit's input, not set by it): time a thread spends per read "
                              "outside the storage (the database writes are asynchronous and hold no thread). "
                              "Uncertainty: uniform on 32.9-35.6 ms, the values each fitted row alone gives within "
                              "the stated precision of the latency (Figure 16 gives 0.017 s and its log 0.0165 s, "
                              "so 16.45-17.5 ms): Figure 16's 630.229 reads/s gives 33.3-34.3 ms; Table 2's "
                              "4,340 IOPS over the four instances (1,085 each) gives 615-635 reads/s, by Figure "
                              "16's read share of its counters (56.7 %) or of its 'Achieved I/O per Second' "
                              "1,077.105 (58.5 %), so 32.9-35.6 ms (arithmetic, no simulation noise). Prior "
                              "(without the rows): log-uniform on 13-70 ms: only the target is known without them, "
                              "1,140 IOPS per instance, 646 reads/s at Figure 16's read share; taking the achieved "
                              "rate within a factor 1.5 of it (431-969 reads/s) at a read latency between a 15K "
                              "drive's 5 ms and Jetstress's 20 ms pass threshold, 32 threads think 32/969 - 0.020 = "
                              "13 ms to 32/431 - 0.005 = 69 ms per read", fitted_on=_JETSTRESS_FITTED_ON,
                              uncertainty=Uniform(32.9, 35.6), prior=LogUniform(13, 70)),
    }  # fmt: skip
    # the streams read the numbers a draw can set through a ParamSet (the params dict keeps the declared ones)
    ps = ParamSet(JETSTRESS_PARAMS, params)
    page = int(ps["db_io_size"].si)
    think = _thread_think_s(ps["thread_think"])
    db = AccessSpec(
        name="Jetstress DB", sizes=(SizeShare(size=page, pct=100),),
        read_pct=round(read_pct, 2), random_pct=100, align=page,
    )  # fmt: skip
    streams = (
        Stream(
            f"{name} db",
            db_volume,
            db,
            db_span,
            workers=threads,
            outstanding=1,
            think=think,
            split_ops=True,
            async_writes=True,
        ),
        Stream(f"{name} log", log_volume, log, log_span, rate=target * log_per_db_io),
    )
    return ApplicationWorkload(name, streams, params, "database IOPS come from the closed loop of threads")


# -- Oracle Orion ---------------------------------------------------------------------------------------

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
    "small_io_size": documented(8, "KiB", f"{_DOC}, Appendix: 'Small IO size: 8 KB'"),
    "large_io_size": documented(1024, "KiB", f"{_DOC}, Appendix: 'Large IO size: 1024 KB'"),
    "write_pct": documented(30, "%", f"{_DOC}, Appendix: 'Write: 30%'"),
    "num_disks": documented(5, "count", f"{_DOC}, Appendix: 'Num_disks: 5'"),
    "simulated_array": Param("RAID 0", CHOICE_UNIT, "document", f"{_DOC}, Appendix: 'Simulated Array Type: RAID 0' "
                             "(Figure 17: '-simulate raid0'); over the one target ('1 FILES found') the simulated "
                             "volume is the LUN itself", choices=("RAID 0",)),
    "stripe_depth": documented(1024, "KiB", f"{_DOC}, Appendix: 'Stripe Depth: 1024 KB': the simulated RAID 0's "
                               "stripe, to which Orion aligns its large random IOs (one stripe each)"),
}  # fmt: skip


def _orion_params(parallel_tests: int) -> dict[str, Param]:
    need_count("orion", "parallel_tests", parallel_tests)
    return dict(
        _ORION_PARAMS,
        parallel_tests=documented_default(
            parallel_tests, ORION_TESTS_PER_TILE, "count", f"{_DOC}, Figure 17: 'one of eight Orion tests running "
            "in parallel' in the four-tile test: two per tile, on the tile's one Oracle LUN (Table 1)"
        ),
    )  # fmt: skip


def orion_small(
    name: str = "orion small",
    *,
    outstanding: int = 25,
    volume: str = "oracle",
    span: int = ORION_DS5020_SPAN,
    parallel_tests: int = ORION_TESTS_PER_TILE,
) -> ApplicationWorkload:
    """One Orion test's small random IO (OLTP): ``outstanding`` 8 KiB random IOs, 30 % writes, over the
    test target (the whole Oracle LUN in the DS5020 run, :data:`ORION_DS5020_SPAN`). Orion's basic matrix
    peaks at 25 outstanding (5 x num_disks). ``parallel_tests`` records how many such tests share the
    target (the caller builds each)."""
    need_count("orion_small", "outstanding", outstanding)
    params = dict(_orion_params(parallel_tests), outstanding_small=documented(outstanding, "count", f"{_DOC}, "
                  "Figure 17: small points 1..25 (5 x Num_disks); peak IOPS at Small=25"))  # fmt: skip
    return ApplicationWorkload(name, (Stream(name, volume, ORION_SMALL, span, workers=outstanding),), params)


def orion_large(
    name: str = "orion large",
    *,
    outstanding: int = 9,
    volume: str = "oracle",
    span: int = ORION_DS5020_SPAN,
    parallel_tests: int = ORION_TESTS_PER_TILE,
) -> ApplicationWorkload:
    """One Orion test's large random IO (DSS): ``outstanding`` 1 MiB random IOs, 30 % writes, each one
    stripe of the simulated RAID 0 (1 MiB aligned), over the test target (:data:`ORION_DS5020_SPAN`;
    the DS5020 run's peak MB/s was at Large=9 of its 0..10 columns)."""
    need_count("orion_large", "outstanding", outstanding)
    params = dict(_orion_params(parallel_tests), outstanding_large=documented(outstanding, "count", f"{_DOC}, "
                  "Figure 17: maximum MBPS at Large=9 of 'Large Columns: 0..10'"))  # fmt: skip
    return ApplicationWorkload(name, (Stream(name, volume, ORION_LARGE, span, workers=outstanding),), params)


def orion_basic_matrix(num_disks: int = 5) -> list[tuple[int, int]]:
    """Orion's ``-matrix basic`` points as (small outstanding, large outstanding): small alone at 1 ..
    5 x num_disks, then large alone at 0 .. 2 x num_disks (36 points for 5 disks, as in Figure 17)."""
    if isinstance(num_disks, bool) or not isinstance(num_disks, int) or num_disks < 1:
        raise ValueError(f"num_disks must be an integer >= 1, got {num_disks!r}")
    return [(s, 0) for s in range(1, 5 * num_disks + 1)] + [(0, q) for q in range(0, 2 * num_disks + 1)]


# -- Iometer: the characterization and the cache IOPS test ----------------------------------------------


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
    need_count("iometer_sequential_read", "workers", workers)
    need_count("iometer_sequential_read", "outstanding", outstanding)
    params = {
        "workers": documented(workers, "count", f"{_DOC}, Appendix, Characterization: 'Four workers'"),
        "outstanding": documented(
            outstanding, "count", f"{_DOC}, Appendix: 'sixteen I/O's per physical drive'"
        ),
        "io_size": documented(
            1, "MB", f"{_DOC}: 'Maximum throughput was measured using 1 MB sequential reads'"
        ),
    }
    return ApplicationWorkload(
        name,
        _iometer_workers(name, volume, SEQ_READ_1M, span, workers, outstanding),
        params,
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
    name: str = "cache reads",
    *,
    workers: int = 4,
    outstanding: int = 16,
    volume: str = "lun",
    span: int = 557 * 10**9,
) -> ApplicationWorkload:
    """An IOPS-from-cache test per LUN: the characterization's workers (four, sixteen outstanding IOs
    each, each from the start of the LUN) reading 512 B sequentially, so nearly every read finds its
    block in the controller's cache. The DS5020 study reports IOPS from cache (Table 5) without its
    access specification; the transfer size is an assumption."""
    need_count("iometer_cache_reads", "workers", workers)
    need_count("iometer_cache_reads", "outstanding", outstanding)
    params = {
        "workers": documented(workers, "count", f"{_DOC}, Appendix, Characterization: 'Four workers'"),
        "outstanding": documented(outstanding, "count", f"{_DOC}, Appendix: 'sixteen I/O's per physical drive'"),
        "io_size": Param(512, "B", "assumption", "not stated for Table 5's IOPS from cache; cache IOPS tests read "
                         "the smallest transfer (512 B) sequentially so that reads hit the controller's cache. "
                         "Uncertainty: one of 512 B or 4 KiB (weights 2, 1): the document gives no access "
                         "specification; cache IOPS figures of the era are quoted at 512 B reads, sometimes at "
                         "4 KiB", uncertainty=Choice((512, 4096), (2, 1))),
    }  # fmt: skip
    size = int(ParamSet(CACHE_READS_PARAMS, params)["io_size"].si)
    spec = SEQ_READ_512 if size == 512 else AccessSpec(
        name=f"{size} B sequential read", sizes=(SizeShare(size=size, pct=100),), read_pct=100, random_pct=0,
        align=512,
    )  # fmt: skip
    return ApplicationWorkload(
        name,
        _iometer_workers(name, volume, spec, span, workers, outstanding),
        params,
        "each worker reads the LUN from its start on its own, 512 B at a time",
    )
