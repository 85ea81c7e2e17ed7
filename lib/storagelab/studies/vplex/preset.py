"""EMC XtremIO (2.4) scale-out all-flash array: 1, 2 or 4 X-Bricks, each two storage controllers, 25 SSDs
and four 8 Gb FC host ports, joined by a 40 Gb/s InfiniBand back end.

Content-based placement spreads every volume's blocks evenly over all SSDs of all bricks, and every
controller takes part in every IO, so the cluster acts as one pool: the host ports (one FIFO stage at the
ports' combined payload rate, as multipathing spreads IOs over them), the controllers' cores (a
multi-server station; per-IO time by operation) and the SSDs (4 KiB units striped over all of them).
The XDP parity overhead and inline deduplication's effect on writes are folded into the per-write
controller time.
"""

from __future__ import annotations

from storagelab import raid
from storagelab.components.flash import flash_drive
from storagelab.components.raid_set import RaidSet
from storagelab.kernel import Link, Path, Station
from storagelab.kernel.io import IORequest
from storagelab.provenance import PRESET_UNIT, Param, ParamSet
from storagelab.topology import Topology

_DOC = "003_d9ad4d44f8318481.txt (EMC VPLEX with XtremIO 2.4)"
BRICKS = (1, 2, 4)


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
                                      "datasheet in datasets/)"),
        "read_cpu_time": Param(96, "us", "assumption", "controller time per read: makes one X-Brick's 4 KiB "
                               "random-read ceiling 250,000 IOPS, EMC's X-Brick figure as recalled (in no "
                               "document in datasets/, so not a fit)", capacity="time"),
        "write_cpu_time": Param(160, "us", "assumption", "controller time per write (hashing for inline "
                                "deduplication, XDP parity, journal mirroring): 5/3 of a read; not stated",
                                capacity="time"),
        "ssd": Param("SATA SSD", PRESET_UNIT, "datasheet", "SSDs modelled with the 'SATA SSD' preset (Intel "
                     "S3700, an eMLC drive of the same class as the X-Brick's 400 GB eMLC SAS SSDs)",
                     capacity="device"),
        "stripe_unit": Param(4, "KiB", "document", f"{_DOC}: XtremIO's 4 KB content-addressed blocks"),
    }  # fmt: skip


def xtremio(bricks: int = 1, **overrides: object) -> Topology:
    """An XtremIO cluster of ``bricks`` X-Bricks as one volume ``lun``; any parameter of :func:`params`
    can be overridden by name (``xtremio(2, read_cpu_time=120)``)."""
    name = f"XtremIO, {bricks} X-Brick(s)"
    p = ParamSet(name, params(bricks), overrides)
    bricks = int(p["bricks"].value)
    n_ssd = int(p["ssds_per_brick"].value) * bricks
    ports = Link("FC host ports", p["port_rate"].si * p["fc_ports_per_brick"].value * bricks)
    t_read, t_write = p["read_cpu_time"].si, p["write_cpu_time"].si

    def cpu_time(io: IORequest, rng) -> float:
        return t_read if io.is_read else t_write

    cores = int(p["cores_per_controller"].value * p["controllers_per_brick"].value) * bricks
    controllers = Station("storage controllers", cpu_time, servers=cores)
    ssds = []
    for i in range(n_ssd):
        dev = p.device("ssd")
        dev.capacity = None  # content-based placement: addresses are hashed over the pool
        ssds.append(flash_drive(f"SSD {i + 1}", dev))
    pool = RaidSet("XDP pool", raid.Raid0(n_ssd, int(p["stripe_unit"].si)), ssds)
    lun = Path("lun", [ports, controllers, pool])
    return Topology(name, {"lun": lun}, p)


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
