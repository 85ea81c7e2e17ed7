"""The Virtual SAN study's workload: its Iometer test, one worker per VM (no other study runs it)."""

from __future__ import annotations

from storagelab.workloads.access_spec import IOMETER_4K_70_30_RANDOM
from storagelab.workloads.application import ApplicationWorkload, Stream, documented, need_count

_DOC = "001_8f3c5816f8fbf1d5.txt (Intel + VMware Virtual SAN 5.5)"

#: Each VM's Iometer span (B): 'The span size is set to 7.5 GB'.
SPAN_PER_VM = 7_500_000_000


def vsan_iometer(name: str = "iometer", *, vms: int = 64, volume: str = "datastore") -> ApplicationWorkload:
    """The Virtual SAN test: one Iometer worker per VM, queue depth 1, 4 KiB 70 % read 100 % random,
    over each VM's 7.5 GB data disk (one closed loop of ``vms`` workers over ``vms`` x 7.5 GB)."""
    need_count("vsan_iometer", "vms", vms)
    params = {
        "vms": documented(vms, "count", f"{_DOC}: tests at 4, 8, 16, 32 and 64 VMs"),
        "queue_depth": documented(1, "count", f"{_DOC}: 'a single worker with a queue depth of one on each virtual machine'"),
        "read_pct": documented(70, "%", f"{_DOC}: '100% Random, 70% Read (30% Write) with a 4K transfer size'"),
        "span_per_vm": documented(7.5, "GB", f"{_DOC}: 'The span size is set to 7.5 GB'"),
    }  # fmt: skip
    stream = Stream(name, volume, IOMETER_4K_70_30_RANDOM, vms * SPAN_PER_VM, workers=vms, outstanding=1)
    return ApplicationWorkload(name, (stream,), params)
