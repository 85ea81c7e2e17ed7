"""Iometer access specifications of the DS5020 appendix: the web-server mix and the 256 KB scan (the DS5020
study's characterization and cache tests are in :mod:`storagelab.studies.ds5020.workloads`)."""

from __future__ import annotations

from storagelab.provenance import Param
from storagelab.workloads.access_spec import IOMETER_WEB_SERVER, AccessSpec, SizeShare
from storagelab.workloads.application import ApplicationWorkload, Stream, documented, need_count
from storagelab.workloads.catalogue._sources import DS5020

__all__ = ["SCAN_256K", "iometer_web_server", "sequential_scan"]


def iometer_web_server(
    name: str = "web", *, workers: int = 4, outstanding: int = 4, volume: str = "web", span: int = 557 * 10**9
) -> ApplicationWorkload:
    """Iometer's web-server access spec as in the DS5020 appendix (Figure 18): four workers, four
    outstanding IOs each, 100 % random reads over the size mix of :data:`IOMETER_WEB_SERVER`."""
    need_count("iometer_web_server", "workers", workers)
    need_count("iometer_web_server", "outstanding", outstanding)
    params = {
        "workers": documented(workers, "count", f"{DS5020}, Appendix: 'Four workers, four outstanding I/Os'"),
        "outstanding": documented(outstanding, "count", f"{DS5020}, Appendix: 'Four workers, four outstanding I/Os'"),
        "read_pct": documented(100, "%", f"{DS5020}, Appendix: '100% random reads, assorted block sizes'"),
        "mean_io_size": Param(round(IOMETER_WEB_SERVER.mean_size / 1024, 2), "KiB", "document",
                              f"{DS5020}, Figure 18 size mix (rows ds5020-web-mix-*)"),
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
    need_count("sequential_scan", "workers", workers)
    need_count("sequential_scan", "outstanding", outstanding)
    params = {
        "workers": documented(workers, "count", f"{DS5020}, Appendix: 'One worker, one outstanding I/O'"),
        "io_size": documented(256, "KiB", f"{DS5020}, Appendix: '100% 256 KB sequential reads'"),
    }
    stream = Stream(name, volume, SCAN_256K, span, workers=workers, outstanding=outstanding)
    return ApplicationWorkload(name, (stream,), params)
