"""Exchange LoadGen 2010: the Outlook_200 action profile as the NexGen study ran it."""

from __future__ import annotations

from storagelab.workloads.access_spec import AccessSpec, SizeShare
from storagelab.workloads.application import ApplicationWorkload, Stream, assumed, documented, need_count
from storagelab.workloads.catalogue._sources import NEXGEN

__all__ = ["LOADGEN_BYTES_PER_MAILBOX", "loadgen_outlook_200"]

#: The data (B) each mailbox's IOs address by default: the NexGen study's four Exchange databases of 100
#: mailboxes, each taken as its whole 450 GB LUN (4 x 450 GB over 400 mailboxes).
LOADGEN_BYTES_PER_MAILBOX = 4 * 450 * 10**9 // 400


def loadgen_outlook_200(
    name: str = "exchange", *, mailboxes: int = 400, volume: str = "exchange", span: int | None = None
) -> ApplicationWorkload:
    """Exchange LoadGen 2010 with the Outlook_200 action profile (NexGen study: 400 mailboxes in four
    databases of 100). Open loop at mailboxes x IOPS per mailbox, 32 KiB database pages (Exchange 2010),
    random, 60 % reads, over ``span`` bytes (by default :data:`LOADGEN_BYTES_PER_MAILBOX` per mailbox)."""
    need_count("loadgen_outlook_200", "mailboxes", mailboxes)
    if span is None:
        span = mailboxes * LOADGEN_BYTES_PER_MAILBOX
    per_mailbox = 0.24
    spec = AccessSpec(name="Exchange 2010 DB", sizes=(SizeShare(size=32 * 1024, pct=100),), read_pct=60,
                      random_pct=100, align=32 * 1024)  # fmt: skip
    params = {
        "mailboxes": documented(mailboxes, "count", f"{NEXGEN}, Exchange: '100 users per database (400 total)'"),
        "action_profile_messages_per_day": documented(200, "count", f"{NEXGEN}, Exchange: 'Action profile: Outlook_200'"),
        "iops_per_mailbox": assumed(per_mailbox, "IOPS/mailbox", "Microsoft's Exchange 2010 mailbox storage "
                                    "sizing table: 200 messages/day, stand-alone database -> 0.24 IOPS per mailbox; "
                                    "not stated in the study"),
        "read_pct": assumed(60, "%", "Exchange 2010 database read/write ratio about 3:2 for this profile "
                            "(Microsoft sizing guidance); not stated in the study"),
    }  # fmt: skip
    stream = Stream(name, volume, spec, span, rate=mailboxes * per_mailbox)
    return ApplicationWorkload(name, (stream,), params)
