"""The named device presets: each a table of the figures its model is built from, every one a
:class:`~storagelab.provenance.Param` with its origin and source. Sources: the project's studies
(../shared/seeds, cited by file name) and product manuals.

A table maps a preset name to the keyword arguments of its family's constructor (:class:`HDD`,
:class:`DRAM`) or datasheet fit (:meth:`SSD.from_datasheet`, :meth:`NVMe.from_datasheet`); the family's
``PRESETS`` holds the builder, and :func:`preset` (or ``HDD.preset(name)``, ...) builds a fresh device
each call: a disk carries state (its head), so every member of an array needs its own.
"""

from __future__ import annotations

from functools import partial

from storagelab.devices.dram import DRAM
from storagelab.devices.flash import SSD, NVMe
from storagelab.devices.hdd import HDD, SeekSpec
from storagelab.provenance import Param
from storagelab.uncertainty.distributions import LogUniform, Triangular

# fmt: off
_DS5020 = "002_3dbf0d9df4c2366f.txt (ESG Lab, IBM DS5020)"
_VSAN = "001_8f3c5816f8fbf1d5.txt (Intel + VMware Virtual SAN 5.5)"
_NEXGEN = "000_95d1997ae9f905ef.txt (NexGen N5, Principled Technologies)"
_CHEETAH = "Seagate Cheetah 15K.7 product manual (100516226), seek performance table"
_SAVVIO = "Seagate Savvio 10K.1 SAS product manual rev. D, section 4.2.1 (excluding controller overhead)"

#: Controller overhead: the Savvio manual gives access times with and without it (4.2 vs 4.0 ms read).
_OVERHEAD = Param(
    0.2, "ms", "datasheet",
    "Seagate Savvio 10K.1 SAS product manual rev. D, 4.2.1: average read access 4.2 ms including controller "
    "overhead vs 4.0 ms excluding it; applied to every HDD preset (other manuals do not split it out)",
)

#: The full-stroke seek of the 7.2K preset, which no datasheet at hand gave.
_FULL_STROKE_7K2 = ("about twice the average seek, the ratio of the Cheetah 15K.7 (6.6 / 3.4 ms) and Savvio 10K.1 "
                    "(8.1 / 4.0 ms) manuals; no full-stroke figure for a 7.2K nearline drive was at hand")

_S3700 = "Intel SSD DC S3700 product specification (800 GB)"
_P3700 = "Intel SSD DC P3700 product specification (800 GB)"
_S3500 = ("Intel SSD DC S3500 Series product specification (intel.com/content/www/us/en/solid-state-drives/"
          "ssd-dc-s3500-spec.html)")
_S3500_LAT = ("Intel SSD DC S3500 Series product specification, M.2 models (manualmachine.com/intel/ssdsckhb080g401/"
              "8143970-user-manual)")


#: Write buffer of the SSD presets: not in the datasheets.
_SSD_BUFFER = Param(16, "MiB", "assumption", "power-loss-protected DRAM write buffer of an enterprise SSD, of "
                    "order tens of MB; not in the datasheets. It only sets how long a write burst above the "
                    "write IOPS is absorbed at the buffered latency. Uncertainty: log-uniform on 4-64 MiB, a "
                    "factor of four either way: what the drive's power-loss capacitors can flush is a few to "
                    "tens of MB; no datasheet states it, so wide", uncertainty=LogUniform(4, 64))

_IODRIVE2 = ("Fusion-io ioDrive2 specifications, 785 GB MLC model (announced October 2011; tabulated at "
             "qdpma.com/storage/SSD_Fusion.html)")

#: Hard disks: ``HDD(name, **table[name])``.
_HDDS: dict[str, dict[str, object]] = {
    "15K FC/SAS": dict(
        rpm=Param(15000, "rpm", "document", f"{_DS5020}: '112 15K RPM FC drives'"),
        capacity=Param(300, "GB", "document", f"{_DS5020}: '300GB 15K FC HDD', quantity 112"),
        cylinders=Param(107500, "count", "datasheet", f"{_CHEETAH} (ST3450857SS), as tabulated in the "
                        "ClusterStor/Mero 'desim' disk model: 107,500 cylinders"),
        read_seek=SeekSpec(
            Param(0.2, "ms", "datasheet", f"{_CHEETAH}: track-to-track read 0.2 ms"),
            Param(3.4, "ms", "datasheet", f"{_CHEETAH}: average read seek 3.4 ms"),
            Param(6.6, "ms", "datasheet", f"{_CHEETAH}: full-stroke read 6.6 ms"),
        ),
        write_seek=SeekSpec(
            Param(0.44, "ms", "datasheet", f"{_CHEETAH}: track-to-track write 0.44 ms"),
            Param(3.9, "ms", "datasheet", f"{_CHEETAH}: average write seek 3.9 ms"),
            Param(7.4, "ms", "datasheet", f"{_CHEETAH}: full-stroke write 7.4 ms"),
        ),
        media_rate=Param(204, "MB/s", "datasheet", "Seagate Cheetah 15K.7 product manual: sustained transfer "
                         "rate 122 to 204 MB/s (inner to outer zone); the outer zone"),
        media_rate_inner=Param(122, "MB/s", "datasheet", "Seagate Cheetah 15K.7 product manual: sustained "
                               "transfer rate 122 to 204 MB/s (inner to outer zone); the inner zone"),
        overhead=_OVERHEAD,
    ),

    "10K SAS": dict(
        rpm=Param(10000, "rpm", "document", f"{_VSAN}: '16x 1.2 TB SAS 10K RPM HDD Seagate ST1200MM0017'"),
        capacity=Param(1.2, "TB", "document", f"{_VSAN}: '16x 1.2 TB SAS 10K RPM HDD Seagate ST1200MM0017'"),
        cylinders=Param(51052, "count", "datasheet", "Seagate Savvio 10K.1 SAS product manual rev. D, 4.1: "
                        "51,052 tracks per surface (earlier drive of the same 2.5-inch 10K family)"),
        read_seek=SeekSpec(
            Param(0.2, "ms", "datasheet", f"{_SAVVIO}: single-track read 0.20 ms (same 2.5-inch 10K family as "
                  "the ST1200MM0017, whose own manual was not consulted)"),
            Param(4.0, "ms", "datasheet", f"{_SAVVIO}: average read 4.0 ms"),
            Param(8.1, "ms", "datasheet", f"{_SAVVIO}: full-stroke read 8.1 ms"),
        ),
        write_seek=SeekSpec(
            Param(0.6, "ms", "datasheet", f"{_SAVVIO}: single-track write 0.60 ms"),
            Param(4.4, "ms", "datasheet", f"{_SAVVIO}: average write 4.4 ms"),
            Param(8.6, "ms", "datasheet", f"{_SAVVIO}: full-stroke write 8.6 ms"),
        ),
        media_rate=Param(124, "MB/s", "datasheet", "Seagate Savvio 10K.3 SAS product manual rev. G, 5.2.3: "
                         "sustained transfer rate 67 to 124 MB/s; the outer zone (a 1.2 TB drive is faster)"),
        media_rate_inner=Param(67, "MB/s", "datasheet", "Seagate Savvio 10K.3 SAS product manual rev. G, "
                               "5.2.3: sustained transfer rate 67 to 124 MB/s; the inner zone"),
        overhead=_OVERHEAD,
    ),

    "7.2K NL-SAS": dict(
        rpm=Param(7200, "rpm", "document", f"{_NEXGEN}, Figure 51: Toshiba MG03SCA300, 'Disk RPM 7200'"),
        capacity=Param(3, "TB", "document", f"{_NEXGEN}, Figure 51: Toshiba MG03SCA300, 'Disk size (GB) 3 TB'"),
        cylinders=Param(320800, "count", "datasheet", "Seagate Constellation ES.3 SAS product manual rev. B, 4.1 "
                        "(1-4 TB 7200 rpm nearline SAS): 320,800 tracks per surface"),
        read_seek=SeekSpec(
            Param(0.23, "ms", "datasheet", "WD/HGST Ultrastar DC HC310 specification, 4.5.1.2: single-track "
                  "read 0.23 ms typical (a 7200 rpm nearline drive; the MG03SCA300 manual was not consulted)"),
            Param(8.2, "ms", "datasheet", "HGST Ultrastar 7K4000 SAS specification, 4.4.1.1: average read "
                  "seek 8.2 ms typical (2-4 TB 7200 rpm nearline SAS, same generation as the MG03SCA300)"),
            Param(16.4, "ms", "device-physics", f"full-stroke read: {_FULL_STROKE_7K2}"),
        ),
        write_seek=SeekSpec(
            Param(0.32, "ms", "datasheet", "WD/HGST Ultrastar DC HC310 specification, 4.5.1.2: single-track "
                  "write 0.32 ms typical"),
            Param(8.2, "ms", "datasheet", "HGST Ultrastar 7K4000 SAS specification, 4.4.1.1: average write "
                  "seek 8.2 ms typical"),
            Param(16.4, "ms", "device-physics", f"full-stroke write: {_FULL_STROKE_7K2}"),
        ),
        media_rate=Param(175, "MB/s", "datasheet", "Seagate Constellation ES.3 SAS product manual rev. B, "
                         "4.1.2: sustained transfer rate 83 to 175 MB/s; the outer zone"),
        media_rate_inner=Param(83, "MB/s", "datasheet", "Seagate Constellation ES.3 SAS product manual rev. B, "
                               "4.1.2: sustained transfer rate 83 to 175 MB/s; the inner zone"),
        overhead=_OVERHEAD,
    ),
}

#: SATA/SAS flash: ``SSD.from_datasheet(name, **table[name])``.
_SSDS: dict[str, dict[str, object]] = {
    "SATA SSD": dict(
        read_iops=Param(75000, "IOPS", "datasheet", f"{_S3700}: 4 KB random read up to 75,000 IOPS"),
        write_iops=Param(36000, "IOPS", "datasheet", f"{_S3700}: 4 KB random write up to 36,000 IOPS"),
        read_latency=Param(50, "us", "datasheet", f"{_S3700}: typical read latency 50 us (4 KB, QD1, "
                           "sequential; measured QD1 random reads are slower, about 150 us in AnandTech's test)"),
        write_latency=Param(65, "us", "datasheet", f"{_S3700}: typical write latency 65 us (4 KB, QD1, "
                            "sequential; acknowledged from the drive's power-protected buffer)"),
        write_buffer=_SSD_BUFFER,
        read_bandwidth=Param(500, "MB/s", "datasheet", f"{_S3700}: sequential read up to 500 MB/s"),
        write_bandwidth=Param(460, "MB/s", "datasheet", f"{_S3700}: sequential write up to 460 MB/s"),
        capacity=Param(800, "GB", "document", f"{_VSAN}: '4x 800GB Intel SSD DC S3700 Series'"),
    ),

    "Intel DC S3500": dict(
        read_iops=Param(75000, "IOPS", "datasheet", f"{_S3500}: 'Random 4KB Reads: Up to 75,000 IOPS' (the series' "
                        "best capacity, as the 800 GB drive of the study; quoted from a public transcription of the "
                        "page, the page itself was not retrieved)"),
        write_iops=Param(11500, "IOPS", "datasheet", f"{_S3500}: 'Random 4KB Writes: Up to 11,500 IOPS' (the series' "
                         "best capacity, as the 800 GB drive of the study; same transcription)"),
        read_latency=Param(50, "us", "datasheet", f"{_S3500_LAT}: 'Latency (average sequential) Read: 50 us (TYP)' "
                           "(stated for the series' M.2 models; the 2.5-inch 800 GB table was not retrieved)"),
        write_latency=Param(65, "us", "datasheet", f"{_S3500_LAT}: 'Write: 65 us (TYP)' (acknowledged from the "
                            "drive's buffer: 'Enhanced power-loss data protection')"),
        write_buffer=_SSD_BUFFER,
        read_bandwidth=Param(500, "MB/s", "assumption", "sequential read of the 800 GB S3500, 500 MB/s as recalled "
                             "from Intel's specification (not retrieved here; the SATA 6 Gb/s ceiling is about 550 "
                             "MB/s). It does not move the 4 KiB service time, which from_datasheet holds at "
                             "parallelism / IOPS. Uncertainty: triangular on 445-550 MB/s, most likely 500: the SATA "
                             "6 Gb/s link's payload ceiling (about 550 MB/s) bounds it above; the series' smaller "
                             "models, as recalled, read at 445-500 MB/s", uncertainty=Triangular(445, 500, 550)),
        write_bandwidth=Param(450, "MB/s", "assumption", "sequential write of the 800 GB S3500, 450 MB/s as recalled "
                              "from Intel's specification (not retrieved here); as read_bandwidth, it does not move "
                              "the 4 KiB service time. Uncertainty: triangular on 410-550 MB/s, most likely 450: the "
                              "SATA link's ceiling above; the series' 480 GB model, as recalled, writes at 410 MB/s, "
                              "and a larger model no slower", uncertainty=Triangular(410, 450, 550)),
        capacity=Param(800, "GB", "document", f"{_VSAN}: '16x 800GB Intel SSD DC S3500 Series'"),
    ),

    "ioDrive2 785GB": dict(
        read_iops=Param(141000, "IOPS", "datasheet", f"{_IODRIVE2}: 'Read IOPS (512 Byte) ... 141,000'"),
        write_iops=Param(535000, "IOPS", "datasheet", f"{_IODRIVE2}: 'Write IOPS (512 Byte) 535,000'"),
        read_latency=Param(68, "us", "datasheet", f"{_IODRIVE2}: 'Read Access Latency ... 68 us'"),
        read_bandwidth=Param(1.5, "GB/s", "datasheet", f"{_IODRIVE2}: 'Read Bandwidth (1MB) ... 1.5 GB/s'"),
        write_bandwidth=Param(1.1, "GB/s", "datasheet", f"{_IODRIVE2}: 'Write Bandwidth (1MB) ... 1.1 GB/s'"),
        block=512,
        capacity=Param(785, "GB", "document", f"{_NEXGEN}: 'Cisco UCS Fusion ioDrive2 785GB adapter'"),
    ),
}

#: NVMe flash: ``NVMe.from_datasheet(name, **table[name])``.
_NVMES: dict[str, dict[str, object]] = {
    "NVMe SSD": dict(
        read_iops=Param(450000, "IOPS", "datasheet", f"{_P3700}: 4 KB random read, rated at least 450,000 "
                        "IOPS at every capacity (Tom's Hardware P3700 review, 2014)"),
        write_iops=Param(90000, "IOPS", "datasheet", f"{_P3700}: 4 KB random write up to 90,000 IOPS"),
        read_latency=Param(20, "us", "datasheet", f"{_P3700}: typical read latency 20 us (4 KB, QD1, sequential)"),
        write_latency=Param(20, "us", "datasheet", f"{_P3700}: typical write latency 20 us (4 KB, QD1, "
                            "sequential; acknowledged from the drive's power-protected buffer)"),
        write_buffer=_SSD_BUFFER,
        read_bandwidth=Param(2800, "MB/s", "datasheet", f"{_P3700}: sequential read up to 2,800 MB/s"),
        write_bandwidth=Param(1900, "MB/s", "datasheet", f"{_P3700}: sequential write up to 1,900 MB/s"),
        capacity=Param(800, "GB", "document", f"{_VSAN}: '4x 800GB Intel SSD DC P3700 Series with NVMe'"),
    ),
}

#: Memory tiers: ``DRAM(name, **table[name])``.
_DRAMS: dict[str, dict[str, object]] = {
    "DDR3 DRAM": dict(
        latency=Param(0.1, "us", "device-physics", "DDR3 random access (row activate + CAS + controller), of "
                      "order 100 ns"),
        bandwidth=Param(10.664, "GB/s", "device-physics", f"one DDR3 channel at the 1,333 MT/s the servers of "
                        f"{_NEXGEN} (Figure 50) run their memory: 1,333e6 transfers x 8 bytes"),
        parallelism=Param(4, "count", "device-physics", "four memory channels per Intel Xeon E5 socket"),
    ),
}
# fmt: on

HDD.PRESETS.update({name: partial(HDD, name, **kw) for name, kw in _HDDS.items()})
SSD.PRESETS.update({name: partial(SSD.from_datasheet, name, **kw) for name, kw in _SSDS.items()})
NVMe.PRESETS.update({name: partial(NVMe.from_datasheet, name, **kw) for name, kw in _NVMES.items()})
DRAM.PRESETS.update({name: partial(DRAM, name, **kw) for name, kw in _DRAMS.items()})

#: The device families, in the order :func:`preset_names` lists them.
_FAMILIES = (HDD, SSD, NVMe, DRAM)


def preset(name: str) -> HDD | SSD | DRAM:
    """A fresh device of any family by preset name (see :func:`preset_names`)."""
    for family in _FAMILIES:
        if name in family.PRESETS:
            return family.PRESETS[name]()
    raise ValueError(f"unknown device preset {name!r}; known: {', '.join(map(repr, preset_names()))}")


def preset_names() -> tuple[str, ...]:
    """Every preset name, all families."""
    return tuple(n for family in _FAMILIES for n in family.PRESETS)
