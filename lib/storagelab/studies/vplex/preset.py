"""The VPLEX study's systems: EMC XtremIO 2.4 alone, and behind VPLEX Local, Metro and Geo.

**XtremIO** (2.4) scale-out all-flash array: 1, 2 or 4 X-Bricks, each two storage controllers, 25 SSDs
and four 8 Gb FC host ports, joined by a 40 Gb/s InfiniBand back end.

Content-based placement spreads every volume's blocks evenly over all SSDs of all bricks, and every
controller takes part in every IO, so the cluster acts as one pool: the host ports (one FIFO stage at the
ports' combined payload rate, as multipathing spreads IOs over them), the controllers' cores (a
multi-server station; per-IO time by operation) and the SSDs (4 KiB units striped over all of them).
The XDP parity overhead and inline deduplication's effect on writes are folded into the per-write
controller time.

**VPLEX** (VS2 engines, two directors each) sits between the hosts and the array: its front-end ports,
its directors (one pool of cores; an IO takes one pass, and a second when the array answers) and a
write-through read cache. *Metro* keeps a distributed device on two clusters, each with its own XtremIO,
with a synchronous mirror over the WAN; *Geo* acknowledges writes in cache and replicates them in delta
sets (:mod:`storagelab.components.replication`). The VPLEX back-end ports and the SAN are the array's
host ports (one store-and-forward hop, as natively).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from storagelab.architectures.capacities import Stage, stations_and_links
from storagelab.architectures.parameters import ParamSet
from storagelab.architectures.topology import Topology
from storagelab.architectures.two_sites import replication_params
from storagelab.components import raid
from storagelab.components.cache import ReadCache
from storagelab.components.flash import flash_drive
from storagelab.components.raid_set import RaidSet
from storagelab.components.replication import DeltaSetReplica, Failure, Site, SyncMirror, WanLink
from storagelab.kernel import Component, Deterministic, Link, Path, Station
from storagelab.kernel.io import IORequest
from storagelab.provenance import PRESET_UNIT, Param
from storagelab.uncertainty import Choice, LogUniform, Uniform

_DOC = "003_d9ad4d44f8318481.txt (EMC VPLEX with XtremIO 2.4)"
BRICKS = (1, 2, 4)


#: The name the uncertainty analysis keys every preset of this study by: the same XtremIO arrays, alone or
#: behind VPLEX Local, Metro or Geo, so a scenario that builds two of them (a VPLEX adder against XtremIO
#: alone) draws each unknown of the array and of the directors once.
FAMILY = "VPLEX and XtremIO"


def params(bricks: int = 1) -> dict[str, Param]:
    """The model's parameters, each with its origin."""
    return {
        "bricks": Param(bricks, "count", "document", f"{_DOC}: clusters of one, two or four X-Bricks", choices=BRICKS),
        "controllers_per_brick": Param(2, "count", "document", f"{_DOC}: two Storage Controllers per X-Brick"),
        "ssds_per_brick": Param(25, "count", "document", f"{_DOC}: 'standard X-Brick' with 25 SSDs"),
        "fc_ports_per_brick": Param(4, "count", "document", f"{_DOC}: four 8 Gb FC host ports per X-Brick"),
        "port_rate": Param(800, "MB/s", "device-physics", "8 Gb FC: 800 MB/s of payload per direction",
                           capacity="rate"),
        "cores_per_controller": Param(12, "count", "assumption", "XtremIO 2.4 storage controller: dual-socket "
                                      "6-core Xeon, recalled from EMC's hardware description (in no document or "
                                      "datasheet in datasets/); a launch-day blog (thulinaround.com, 'What is an "
                                      "X-Brick?', Nov 2013) says 'dual 8 core CPUs' per controller, 16 cores: not "
                                      "adopted yet, as 16 at the same 250,000-IOPS ceiling means a longer time per "
                                      "IO, which moves the study's latency points (a recalibration). Uncertainty: 12 or 16, "
                                      "equally likely (the two accounts above); drawn independently of read_cpu_time "
                                      "and write_cpu_time, whose ranges cover either count at EMC's ceilings",
                                      uncertainty=Choice((12, 16))),
        "read_cpu_time": Param(96, "us", "assumption", "controller time per read: makes one X-Brick's 4 KiB "
                               "random-read ceiling 250,000 IOPS, EMC's per-X-Brick figure (datasets/envelope.csv "
                               "env-xtremio-xbrick-read-iops-leak and -croc; not a fit). Uniform on 80-128 us: 128 us "
                               "is 250,000 IOPS with 16 cores (the blog's 'dual 8 core CPUs'); 80 us is a 12-core "
                               "ceiling of 300,000, as the CROC tester's reads 'easily reached and passed' 250k "
                               "(env-xtremio-xbrick-read-iops-croc: by how much is not stated)", capacity="time",
                               uncertainty=Uniform(80.0, 128.0)),
        "write_cpu_time": Param(160, "us", "assumption", "controller time per write (hashing for inline "
                                "deduplication, XDP parity, journal mirroring): 5/3 of a read, a 4 KiB random-write "
                                "ceiling of 150,000 IOPS, the top of the 100,000-150,000 'depending on the data's "
                                "uniqueness' EMC states (datasets/envelope.csv env-xtremio-xbrick-write-iops-croc-*); "
                                "the cost per write is not stated. Uniform on 160-320 us: the 100,000-150,000 ceiling "
                                "with 12 cores (160-240 us) or 16 (213-320 us)", capacity="time",
                                uncertainty=Uniform(160.0, 320.0)),
        "ssd": Param("SATA SSD", PRESET_UNIT, "datasheet", "SSDs modelled with the 'SATA SSD' preset (Intel "
                     "S3700, an eMLC drive of the same class as the X-Brick's 400 GB eMLC SAS SSDs)",
                     capacity="device"),
        "stripe_unit": Param(4, "KiB", "document", f"{_DOC}: XtremIO's 4 KB content-addressed blocks"),
    }  # fmt: skip


def xtremio(bricks: int = 1, **overrides: object) -> Topology:
    """An XtremIO cluster of ``bricks`` X-Bricks as one volume ``lun``; any parameter of :func:`params`
    can be overridden by name (``xtremio(2, read_cpu_time=120)``)."""
    name = f"XtremIO, {bricks} X-Brick(s)"
    p = ParamSet(name, params(bricks), overrides, family=FAMILY)
    lun = xtremio_array(p, "lun")
    return Topology(name, {"lun": lun}, p, stages=xtremio_stages(p, [lun]))


def xtremio_stages(p: ParamSet, arrays: Sequence[Component]) -> list[Stage]:
    """The stages of the XtremIO arrays ``arrays`` (built by :func:`xtremio_array`) that can bind: host
    ports, the controllers' cores and the SSDs."""
    parts = stations_and_links(list(arrays))
    ports = [c for c in parts if isinstance(c, Link)]
    cores = [c for c in parts if isinstance(c, Station) and c.name.endswith("storage controllers")]
    ssds = [c for c in parts if isinstance(c, Station) and c not in cores and "VPLEX directors" not in c.name]
    bricks = int(p["bricks"].value)
    return [
        Stage("FC host ports", ports, f"{int(p['fc_ports_per_brick'].value) * bricks} x 8 Gb FC ports",
              cost=("port_rate",)),
        Stage("storage controllers", cores, f"{int(p['controllers_per_brick'].value) * bricks} storage controllers' "
              "cores", cost=("read_cpu_time", "write_cpu_time"), concurrency=("cores_per_controller",),
              per_io_s=p["read_cpu_time"].si),
        Stage("SSDs", ssds, f"{int(p['ssds_per_brick'].value)} SSDs per X-Brick", cost=("ssd",)),
    ]  # fmt: skip


def vplex_stages(p: ParamSet, fronts: Sequence[tuple[Link, Station]], wan: Link | None = None) -> list[Stage]:
    """The VPLEX clusters' stages that can bind: front-end ports, directors (and the WAN between sites)."""
    out = [
        Stage("VPLEX front-end ports", [fe for fe, _ in fronts], "8 Gb FC front-end ports of the directors",
              cost=("fe_port_rate",)),
        Stage("VPLEX directors", [d for _, d in fronts], "VS2 directors' cores", cost=("director_time",),
              concurrency=("cores_per_director",)),
    ]  # fmt: skip
    if wan is not None:
        out.append(Stage("inter-cluster WAN", [wan], "the inter-cluster link", cost=("wan_bandwidth",)))
    return out


def xtremio_array(p: ParamSet, name: str, prefix: str = "") -> Path:
    """The XtremIO model built from parameter set ``p`` (the keys of :func:`params`): host ports, the
    controllers' cores and the SSD pool, as a path named ``name``; ``prefix`` starts every component's
    name (two arrays in one topology, one per site)."""
    bricks = int(p["bricks"].value)
    n_ssd = int(p["ssds_per_brick"].value) * bricks
    ports = Link(f"{prefix}FC host ports", p["port_rate"].si * p["fc_ports_per_brick"].value * bricks)
    t_read, t_write = p["read_cpu_time"].si, p["write_cpu_time"].si

    def cpu_time(io: IORequest, rng) -> float:
        return t_read if io.is_read else t_write

    cores = int(p["cores_per_controller"].value * p["controllers_per_brick"].value) * bricks
    controllers = Station(f"{prefix}storage controllers", cpu_time, servers=cores)
    label = p.device_label("ssd", "SSD")  # 'SSD 1' ..., or the overriding device's name
    ssds = []
    for i in range(n_ssd):
        dev = p.device("ssd")
        dev.capacity = None  # content-based placement: addresses are hashed over the pool
        ssds.append(flash_drive(f"{prefix}{label} {i + 1}", dev))
    pool = RaidSet(f"{prefix}XDP pool", raid.Raid0(n_ssd, int(p["stripe_unit"].si)), ssds)
    return Path(name, [ports, controllers, pool])


def capacity_iops(topology: Topology, is_read: bool, size: int) -> float:
    """The model's bottleneck throughput (IOPS) for one IO type: the least of the ports, the controller
    cores and the SSDs, from mean service times."""
    p = topology.params
    bricks = p["bricks"].value
    ports = p["port_rate"].si * p["fc_ports_per_brick"].value * bricks / size
    cores = p["cores_per_controller"].value * p["controllers_per_brick"].value * bricks
    cpu = cores / (p["read_cpu_time"].si if is_read else p["write_cpu_time"].si)
    ssd = p.device("ssd")
    units = max(1, -(-size // int(p["stripe_unit"].si)))
    n_ssd = p["ssds_per_brick"].value * bricks
    ssd_iops = n_ssd * ssd.parallelism / (units * ssd.mean_service_time(is_read, int(p["stripe_unit"].si)))
    return float(min(ports, cpu, ssd_iops))


# -- VPLEX in front of XtremIO: Local, Metro (synchronous) and Geo (asynchronous) ----------------------

ENGINES = (1, 2, 4)
#: The read-hit latency the director time is fitted on (the low end of the study's 85-150 us range,
#: for a 4 KiB read at light load).
READ_HIT_FIT_S = 85e-6
FIT_IO_BYTES = 4096
FIT_ENGINES = 2


MODES = ("local", "metro", "geo")


def vplex_params(engines: int = 2, mode: str = "local") -> dict[str, Param]:
    """VPLEX's parameters (VS2 engines) for ``mode`` (``local``, ``metro``, ``geo``), each with its origin;
    the array's are :func:`params`."""
    if mode not in MODES:
        raise ValueError(f"VPLEX mode must be one of {MODES}, got {mode!r}")
    fe_rate = 800.0  # MB/s, 8 Gb FC payload per direction
    fe_ports = 4 * 2 * FIT_ENGINES  # ports per director x directors per engine x engines, as the fit ran
    fe_us = FIT_IO_BYTES / (fe_rate * 1e6 * fe_ports) * 1e6
    director_us = READ_HIT_FIT_S * 1e6 - fe_us
    out = {
        "engines": Param(
            engines,
            "count",
            "document",
            f"{_DOC}: 'One, two, or four engines'; the Metro tests used a dual engine system",
            choices=ENGINES,
        ),
        "directors_per_engine": Param(
            2, "count", "document", f"{_DOC}: 'A VPLEX VS2 Engine is a chassis containing two directors'"
        ),
        "fe_ports_per_director": Param(
            4,
            "count",
            "document",
            f"{_DOC}: 'one four-port 8 Gb/s Fibre Channel I/O "
            "module used for front-end SAN (host) connectivity'",
        ),
        "fe_port_rate": Param(
            fe_rate,
            "MB/s",
            "device-physics",
            f"8 Gb FC: 800 MB/s of payload per direction; {_DOC}: 'each VS2 port can supply full line rate'",
            capacity="rate",
        ),
        "cores_per_director": Param(
            6,
            "count",
            "assumption",
            "one six-core CPU per VS2 director, recalled from "
            "EMC's hardware description (in no document in datasets/). Uncertainty: 4, 6 or 12 cores, "
            "equally likely (one quad- or six-core Xeon, or two six-core): the recollection is uncertain and the "
            "document says only 'the CPUs of their corresponding director'",
            uncertainty=Choice((4, 6, 12)),
        ),
        "director_time": Param(
            round(director_us, 2),
            "us",
            "fit",
            "director CPU time per pass of an IO (uncertainty: +/- 0.5 us, the row's stated precision, the "
            "model being deterministic at light load; prior without the row: log-uniform on 30-300 us, an "
            "inline appliance's per-pass time, its read-miss adder of 200-400 us being two passes): a read "
            "hit takes one pass, a read miss and a write two (on the way in, and when the "
            "array answers); fitted so that a 4 KiB read hit at light load takes 85 us, the "
            f"low end of the study's 85-150 us, after the 4 KiB crosses the front end ({fe_us:.2f} "
            f"us at the {fe_ports} ports' combined rate, {FIT_ENGINES} engines)",
            fitted_on=("readhit-latency-range-low",),
            capacity="time",
            # the row is stated to the microsecond ('85-150 microseconds'): +/- 0.5 us; a read hit at light
            # load is deterministic in the model, so its simulation noise adds nothing
            uncertainty=Uniform(round(director_us, 2) - 0.5, round(director_us, 2) + 0.5),
            # without the row: an inline appliance's per-pass time, from tens of us to the 150 us top of
            # the study's read-hit range and beyond (its read-miss adder, 200-400 us, is two passes)
            prior=LogUniform(30.0, 300.0),
        ),
        "cache_per_engine": Param(
            72, "GB", "document", f"{_DOC}: Table 2, VS2 single engine 72 GB, dual 144, quad 288"
        ),
        "cache_page": Param(
            4,
            "KiB",
            "assumption",
            "VPLEX cache page of 4 KiB, the block size hosts and XtremIO use; not stated. Uncertainty: 4 or "
            "8 KiB, equally likely (the study: Iometer 'Alignment should be set to a page size of 4KB or 8KB')",
            uncertainty=Choice((4, 8)),
        ),
    }
    if mode == "local":
        return out
    # the two-site parameters every site pair has (storagelab.architectures.two_sites), with VPLEX's sources
    pair = replication_params("metro")
    out |= {
        "wan_rtt": replace(
            pair["wan_rtt"],
            origin="document",
            source=f"{_DOC}: the Metro tests ran 'with an RTT "
            "latency of 0 milliseconds and an RTT latency of 1 millisecond'",
            uncertainty=None,  # stated by the study: the generic pair's range does not apply
        ),
        "wan_bandwidth": replace(
            pair["wan_bandwidth"],
            source="one 10 Gb/s inter-cluster link (the WAN COM module "
            "has two 10 GbE ports per director, but the study does not state the WAN it "
            "tested). Log-uniform on 125-5,000 MB/s: from a 1 Gb/s link to four 10 Gb/s",
            uncertainty=LogUniform(125.0, 5000.0),
        ),
        "detection_time": replace(
            pair["detection_time"],
            source="time before the preferred cluster continues alone "
            "after losing its peer (VPLEX's detach delay, recalled as 5 s; not in the "
            "document). Log-uniform on 1-30 s: the delay is configurable and the recollection uncertain",
            uncertainty=LogUniform(1.0, 30.0),
        ),
        **_engine_costs(pair),
    }
    if mode == "metro":
        return out
    return out | {
        "delta_cycle": Param(30, "s", "assumption", "VPLEX Geo closes a delta set about every 30 s (recalled; "
                             "not in the document). Uniform on 10-60 s: the recollection is uncertain and the "
                             "cycle tunable", uncertainty=Uniform(10.0, 60.0)),
        "deltas_closed": Param(2, "count", "assumption", "closed delta sets that may wait (one being exchanged, "
                               "one being applied) before the open one must stop growing; recalled. One of 1-3, "
                               "equally likely", uncertainty=Choice((1, 2, 3))),
        "delta_buffer": Param(50, "%", "assumption", "share of the cluster's cache that may hold Geo deltas "
                              "before host writes are throttled; not stated. Uniform on 20-80 %: neither a sliver nor "
                              "all of the cache", uncertainty=Uniform(20.0, 80.0)),
    }  # fmt: skip


def _engine_costs(pair: dict[str, Param]) -> dict[str, Param]:
    """The replication engine's per-write cost at each end, as every site pair has it
    (:func:`storagelab.architectures.two_sites.engine_params`), set to 0 here: VPLEX's engine is its
    directors, already on the write's path as passes of the ``director_time`` station (a pool of cores);
    the generic default would count that work twice."""
    why = (
        "0 in addition to the directors: VPLEX's replication engine is its directors, and their work per "
        "write is already on the path as passes of the director station (director_time, fitted on "
        "'readhit-latency-range-low', the read hit alone; cores_per_director x directors servers): at the "
        "writing cluster a pass on the way in and one when its array answers, at the other a pass on "
        "arrival and one before the acknowledgement crosses back. The site pair's default (100 us per end) "
        "is this study's own 'WAN RTT + 200-600 microseconds' (rows write-adder-metro-*): adding it would "
        "count the engine twice and fit the Metro write adder it is checked against. Uncertainty: uniform on "
        "0-100 us, from nothing beyond the director passes to the site pair's default (half the study's 200 us)"
    )
    return {
        name: replace(
            pair[name], value=0, origin="assumption", source=f"{side}: {why}", uncertainty=Uniform(0.0, 100.0)
        )
        for name, side in (
            ("engine_write_cost_local", "sending side"),
            ("engine_write_cost_remote", "receiving side"),
        )
    }


def _vplex_cluster(p: ParamSet, site: str) -> tuple[Link, Station]:
    """One VPLEX cluster's front end (its host ports) and directors (one pool of cores)."""
    engines = int(p["engines"].value)
    directors = engines * int(p["directors_per_engine"].value)
    fe = Link(
        f"{site}VPLEX front-end ports", p["fe_port_rate"].si * p["fe_ports_per_director"].value * directors
    )
    cores = int(p["cores_per_director"].value) * directors
    return fe, Station(f"{site}VPLEX directors", Deterministic(p["director_time"].si), servers=cores)


def _vplex_cache(p: ParamSet, site: str, backend: Component) -> ReadCache:
    """A cluster's write-through read cache (written blocks stay cached) in front of ``backend``; a hit
    costs the director pass and the front-end transfer only."""
    return ReadCache(
        f"{site}VPLEX cache", backend, capacity_bytes=int(p["cache_per_engine"].si * p["engines"].value),
        block_bytes=int(p["cache_page"].si), hit_latency=0.0, hit_bandwidth=1e15, write_policy="update",
    )  # fmt: skip


def _vplex_paramset(name: str, engines: int, bricks: int, mode: str, overrides: dict) -> ParamSet:
    return ParamSet(name, {**vplex_params(engines, mode), **params(bricks)}, overrides, family=FAMILY)


def vplex_local(engines: int = 2, bricks: int = 1, **overrides: object) -> Topology:
    """VPLEX Local (one cluster of ``engines`` VS2 engines) in front of an XtremIO of ``bricks`` X-Bricks,
    one volume ``lun``: host ports, a director pass, the write-through read cache; a miss or a write
    goes to the array and takes a second director pass when it answers."""
    name = f"VPLEX Local ({engines} engine(s)) + XtremIO ({bricks} X-Brick(s))"
    p = _vplex_paramset(name, engines, bricks, "local", overrides)
    fe, director = _vplex_cluster(p, "")
    array = xtremio_array(p, "XtremIO")
    cache = _vplex_cache(p, "", Path("VPLEX back end", [array, director]))
    stages = vplex_stages(p, [(fe, director)]) + xtremio_stages(p, [array])
    return Topology(name, {"lun": Path("lun", [fe, director, cache])}, p, stages=stages)


def _two_clusters(p: ParamSet, write_back: bool) -> tuple[list[Site], list[tuple[Link, Station]]]:
    """Clusters A and B, each with its front end, directors and its own XtremIO: the sites of a
    replication (local back end: the array then a director pass; writes from the peer: a director pass,
    the array, and with write-through a second pass before the acknowledgement crosses back) and the
    front ends the hosts reach. ``write_back`` (Geo): a write is acknowledged by a director pass."""
    sites, fronts = [], []
    for site in ("A", "B"):
        fe, director = _vplex_cluster(p, f"{site}: ")
        array = xtremio_array(p, f"{site}: XtremIO", prefix=f"{site}: ")
        local = Path(f"{site}: back end", [array, director])
        from_peer = Path(
            f"{site}: writes from the peer", [director, array] if write_back else [director, array, director]
        )
        sites.append(Site(site, local, apply=from_peer, cache=director if write_back else None))
        fronts.append((fe, director))
    return sites, fronts


def vplex_metro(
    engines: int = 2, bricks: int = 1, *, failures: Sequence[Failure] = (), witness: bool = False,
    **overrides: object,
) -> Topology:  # fmt: skip
    """VPLEX Metro: two clusters (A, B), each in front of its own XtremIO, a distributed device ``lun``
    (hosts at A) / ``lun @ B`` (hosts at B) kept by a synchronous mirror over the WAN: a write completes
    when both arrays have it; reads are served at the host's cluster. ``failures``: link or site
    failures during the run (:mod:`storagelab.components.replication`); ``parts["replication"]`` is the
    mirror (its timeline, RPO and failure log)."""
    name = f"VPLEX Metro ({engines} engine(s) per cluster) + XtremIO ({bricks} X-Brick(s)) x 2"
    p = _vplex_paramset(name, engines, bricks, "metro", overrides)
    wan = WanLink("inter-cluster WAN", p["wan_bandwidth"].si, p["wan_rtt"].si)
    sites, fronts = _two_clusters(p, write_back=False)
    mirror = SyncMirror(
        "distributed device", sites, wan, failures=failures, witness=witness, detection_time=p["detection_time"].si,
        region_bytes=int(p["cache_page"].si), engine_local=p["engine_write_cost_local"].si,
        engine_remote=p["engine_write_cost_remote"].si,
    )  # fmt: skip
    volumes = {}
    for i, (fe, director) in enumerate(fronts):
        site = sites[i].name
        cache = _vplex_cache(p, f"{site}: ", mirror.at(i))
        volumes["lun" if i == 0 else f"lun @ {site}"] = Path(f"{site}: lun", [fe, director, cache])
    stages = vplex_stages(p, fronts, wan) + xtremio_stages(p, [site.volume for site in sites])
    return Topology(name, volumes, p, parts={"replication": mirror, "wan": wan}, stages=stages)


def vplex_geo(
    engines: int = 2, bricks: int = 1, *, failures: Sequence[Failure] = (), **overrides: object
) -> Topology:
    """VPLEX Geo: two clusters, hosts writing at A; a write is acknowledged once it is in A's cache and
    mirrored to a second director (write-back: one more director pass), goes to A's array in the
    background, and reaches B's array through delta sets closed every ``delta_cycle`` and exchanged over
    the WAN. When the deltas fill ``delta_buffer`` of A's cache, host writes are throttled to the drain
    rate (the lesser of the WAN and B's array). ``parts["replication"]`` is the replica (lag timeline,
    RPO, failure log)."""
    name = f"VPLEX Geo ({engines} engine(s) per cluster) + XtremIO ({bricks} X-Brick(s)) x 2"
    p = _vplex_paramset(name, engines, bricks, "geo", overrides)
    wan = WanLink("inter-cluster WAN", p["wan_bandwidth"].si, p["wan_rtt"].si)
    sites, fronts = _two_clusters(p, write_back=True)
    cache_bytes = p["cache_per_engine"].si * int(p["engines"].value)
    replica = DeltaSetReplica(
        "asynchronous consistency group", sites, wan, buffer_bytes=cache_bytes * p["delta_buffer"].value / 100,
        cycle=p["delta_cycle"].si, max_closed=int(p["deltas_closed"].value), failures=failures,
        detection_time=p["detection_time"].si, region_bytes=int(p["cache_page"].si),
        engine_local=p["engine_write_cost_local"].si, engine_remote=p["engine_write_cost_remote"].si,
    )  # fmt: skip
    fe, director = fronts[0]
    cache = _vplex_cache(p, "A: ", replica.at(0))
    stages = vplex_stages(p, fronts, wan) + xtremio_stages(p, [site.volume for site in sites])
    return Topology(
        name,
        {"lun": Path("A: lun", [fe, director, cache])},
        p,
        parts={"replication": replica, "wan": wan},
        stages=stages,
    )


#: This study's presets by name, each a function of parameter overrides returning a fresh :class:`Topology`.
PRESETS: dict[str, Callable[..., Topology]] = {
    **{f"XtremIO, {b} X-Brick(s)": (lambda b=b, **o: xtremio(b, **o)) for b in BRICKS},
    "VPLEX Local + XtremIO": vplex_local,
    "VPLEX Metro + XtremIO (two sites)": vplex_metro,
    "VPLEX Geo + XtremIO (two sites)": vplex_geo,
}
