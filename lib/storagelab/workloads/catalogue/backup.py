"""Backup-like writing: large sequential writes (none of the studies runs one)."""

from __future__ import annotations

from storagelab.workloads.access_spec import AccessSpec, SizeShare
from storagelab.workloads.application import ApplicationWorkload, Stream, assumed, need_count

__all__ = ["SEQ_WRITE_1M", "backup_stream"]

SEQ_WRITE_1M = AccessSpec(name="1 MB sequential write", sizes=(SizeShare(size=1024 * 1024, pct=100),),
                          read_pct=0, random_pct=0, align=512)  # fmt: skip


def backup_stream(
    name: str = "backup", *, streams: int = 1, volume: str = "backup", span: int = 1000 * 10**9
) -> ApplicationWorkload:
    """Backup-like writing: ``streams`` streams of 1 MiB sequential writes, one outstanding IO each (none
    of the studies runs one; every number here is an assumption)."""
    need_count("backup_stream", "streams", streams)
    params = {
        "streams": assumed(streams, "count", "the user's choice: backup jobs writing at once"),
        "io_size": assumed(1, "MiB", "backup software writes large sequential blocks; 1 MiB as the four-corners "
                           "sequential test uses"),
    }  # fmt: skip
    stream = Stream(name, volume, SEQ_WRITE_1M, span, workers=streams, outstanding=1)
    return ApplicationWorkload(name, (stream,), params)
