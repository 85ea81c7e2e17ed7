"""NexGen N5-150 hybrid flash array as the Principled Technologies reference architecture ran it: 2.4 TB
of PCIe flash (ioMemory) in front of 16 x 3 TB 7.2K NL-SAS drives, two active-active storage processors,
four 10 GbE iSCSI ports, and the study's six LUNs, each on its storage processor with its QoS policy
(Figure 9).

An IO crosses an iSCSI port of its LUN's storage processor (FIFO at the 10 GbE payload rate), the
storage processor (one queue: its per-IO time and internal transfer; with ``qos=1`` the queue is
ordered by the LUNs' service levels, :class:`~storagelab.qos.ServiceLevels`, else first come first
served), then the tiers. Each storage processor has its own ioMemory card and the cards' contents are
kept in step, so a write lands on both cards (the test writes about 100 GB over 90 minutes, far less
than the flash holds, so destaging is left out); a read is served by the processor's card for the LUN's
flash share and by the drives otherwise. The VDI master image and linked clones are hot (flash); the
OLTP and Exchange databases are read from the drives.
"""

from __future__ import annotations

from collections.abc import Mapping

from storagelab import raid
from storagelab.components.flash import flash_drive
from storagelab.components.raid_set import RaidSet
from storagelab.components.tiering import ReadWriteSplit, WarmReadCache
from storagelab.kernel import Link, Mirror, Path, Station
from storagelab.kernel.io import IORequest
from storagelab.provenance import PRESET_UNIT, Param, ParamSet
from storagelab.qos import ServiceLevels
from storagelab.studies.nexgen.policies import LUN_POLICY, lun_levels
from storagelab.topology import Topology

_DOC = "000_95d1997ae9f905ef.txt (NexGen N5, Principled Technologies)"
_SFD3 = ("virtualtothecore.com, '#SFD3: An analysis of NexGen Storage': 'The models offers speed ranging from "
         "50k to 150k IOPS (4k, 50/50 read-write)'; 'Each controller has on-board non-shared Fusion-IO cards, and "
         "their content is syncronized between controllers in real time'")  # fmt: skip

#: The study's LUNs (Figure 9) as the model's volumes: DVD-SQL, Exchange and the four VDI LUNs.
VOLUMES = tuple(LUN_POLICY)
VDI_LUNS = ("vdt-a", "vdt-b", "vdt-c", "vdt-d")


def params() -> dict[str, Param]:
    """The model's parameters, each with its origin."""
    return {
        "qos": Param(0, "count", "document", f"{_DOC}, Figure 9: the LUNs' QoS policies; 1 = on as in the study, "
                     "0 = off (first come first served at the storage processors)", choices=(0, 1), low=0),
        "hdd_count": Param(16, "count", "document", f"{_DOC}, Figure 51: 'Number of disks 16'"),
        "hdd": Param("7.2K NL-SAS", PRESET_UNIT, "document", f"{_DOC}, Figure 51: 'Disk RPM 7200' (device preset "
                     "'7.2K NL-SAS')", capacity="device"),
        "hdd_raid": Param(10, "count", "assumption", "drives in RAID-10 (10 = RAID-10); the layout is not stated",
                          choices=(10,)),
        "flash_capacity": Param(2.4, "TB", "document", f"{_DOC}: '2.4TB ioMemory flash capacity'"),
        "flash_device": Param("NVMe SSD", PRESET_UNIT, "datasheet", "each processor's ioMemory card modelled with "
                              "the 'NVMe SSD' preset (Intel P3700 datasheet figures) as a stand-in", capacity="device"),
        "iscsi_ports": Param(4, "count", "document", f"{_DOC}: 'We then connected the four 10Gbps links'"),
        "port_rate": Param(1.17, "GB/s", "device-physics", "10 GbE carries about 1.17 GB/s of iSCSI payload",
                           capacity="rate"),
        "processors": Param(2, "count", "document", f"{_DOC}, Figure 51: two storage processors, active-active",
                            choices=(2,)),
        "processor_iops": Param(75_000, "IOPS", "datasheet", f"the N5-150's rating of 150,000 IOPS at 4 KiB, 50/50 "
                                f"read/write, shared by its two processors ({_SFD3})", capacity="rate"),
        "processor_bandwidth": Param(4, "GB/s", "assumption", "each storage processor's internal transfer rate: "
                                     "set above the 2.34 GB/s of the two 10 GbE ports it serves, so that it never "
                                     "binds; not stated", capacity="rate"),
        "stripe_unit": Param(64, "KiB", "assumption", "HDD stripe unit; not stated"),
        "vdi_flash_share": Param(1.0, "ratio", "device-physics", "the 24 GB master image and the linked clones "
                                 "that all desktops read are the hottest data on the array: served from flash"),
        "db_flash_share": Param(0.0, "ratio", "fit", "share of OLTP and Exchange reads served from flash: fitted "
                                "on the ~6,500 OPM (s1-opm), which has no solution inside [0, 1] (even at 0 the "
                                "model gives more OPM), so it sits at the bound 0", fitted_on=("s1-opm",)),
    }  # fmt: skip


def processor_time(p: ParamSet) -> float:
    """A storage processor's per-IO time (s): its share of the rated IOPS at 4 KiB, less the 4 KiB's
    internal transfer (so that 4 KiB IOs run at exactly the rating)."""
    return 1.0 / p["processor_iops"].si - 4096 / p["processor_bandwidth"].si


def nexgen(*, processor_of: Mapping[str, str] | None = None, **overrides: object) -> Topology:
    """The N5-150 with volumes ``oltp`` (DVD-SQL), ``exchange`` and ``vdt-a`` .. ``vdt-d``; QoS off by
    default (``nexgen(qos=1)``: the study's policies); any parameter of :func:`params` can be overridden
    by name (``nexgen(hdd_count=32)``). ``processor_of`` moves LUNs to another storage processor
    (``{"vdt-a": "A"}``; Figure 9's layout otherwise)."""
    layout = {lun: sp for lun, (_policy, sp) in LUN_POLICY.items()}
    for lun, sp in (processor_of or {}).items():
        if lun not in layout or sp not in ("A", "B"):
            raise ValueError(
                f"preset 'NexGen N5-150': processor_of maps a LUN ({', '.join(layout)}) to 'A' or 'B', got {lun!r}: {sp!r}"
            )
        layout[lun] = sp
    p = ParamSet("NexGen N5-150", params(), overrides)
    qos = bool(p["qos"].value)
    name = f"NexGen N5-150 (QoS {'on' if qos else 'off'})"
    per_io, rate = processor_time(p), p["processor_bandwidth"].si
    if per_io <= 0:
        raise ValueError(f"preset {name!r}: processor_iops is above what processor_bandwidth moves at 4 KiB")

    def service(io: IORequest, _rng: object) -> float:
        return per_io + io.size / rate

    processors = "AB"[: int(p["processors"].value)]  # the LUNs name processor A or B (Figure 9)
    levels = lun_levels()
    sps = {
        sp: Station(f"storage processor {sp}", service, servers=1,
                    discipline=ServiceLevels(levels) if qos else None)
        for sp in processors
    }  # fmt: skip
    n_ports = int(p["iscsi_ports"].value)
    ports = [Link(f"10GbE port {i + 1}", p["port_rate"].si) for i in range(n_ports)]
    cards = {}
    for sp in "AB":
        ssd = p.device("flash_device")
        ssd.capacity = int(p["flash_capacity"].si)  # the volumes' address ranges share the 2.4 TB tier
        cards[sp] = flash_drive(f"ioMemory {sp}", ssd)
    n_hdd = int(p["hdd_count"].value)
    if p["hdd_raid"].value != 10 or n_hdd % 2:
        raise ValueError(f"preset {name!r}: RAID-10 needs an even hdd_count, got {n_hdd}")
    hdds = [Station(f"NL-SAS {i + 1}", p.device("hdd"), discipline="elevator") for i in range(n_hdd)]
    disks = RaidSet("NL-SAS RAID-10", raid.Raid10(n_hdd // 2, int(p["stripe_unit"].si)), hdds)
    writes = Mirror("ioMemory A + B", [cards["A"], cards["B"]])  # both cards hold every write
    volumes, on_sp = {}, {"A": 0, "B": 0}
    for vol in VOLUMES:
        sp = layout[vol]
        port = ports[("AB".index(sp) * n_ports // 2 + on_sp[sp] % (n_ports // 2)) % n_ports]
        on_sp[sp] += 1
        share = p["vdi_flash_share" if vol in VDI_LUNS else "db_flash_share"].value
        reads = WarmReadCache(f"{vol} reads", cards[sp], disks, share)
        volumes[vol] = Path(vol, [port, sps[sp], ReadWriteSplit(f"{vol} tiers", reads, writes)])
    return Topology(name, volumes, p)
