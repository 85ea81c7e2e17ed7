"""The NexGen N5 QoS policy table (Figure 2 of the study) and which policy each LUN had (Figure 9), read
from ``datasets/nexgen.csv`` so that the scheduler's settings and the published numbers are one source."""

from __future__ import annotations

from storagelab.published import datasets
from storagelab.qos.service_levels import ServiceLevel

#: Figure 9: each LUN's policy and storage processor (the model's volume names).
LUN_POLICY = {
    "oltp": ("Policy 1", "A"),  # DVD-SQL
    "exchange": ("Policy 2", "A"),
    "vdt-a": ("Policy 1", "B"),
    "vdt-b": ("Policy 2", "B"),
    "vdt-c": ("Policy 2", "B"),
    "vdt-d": ("Policy 4", "A"),
}


#: Service levels in the order the array serves them under contention.
LEVELS = ("Mission-critical", "Business-critical", "Non-critical")


def policy_table() -> dict[str, ServiceLevel]:
    """``"Policy 1"`` .. ``"Policy 5"`` -> :class:`ServiceLevel` (IO/s, bytes/s, s) from the dataset rows
    ``qos-p<n>-iops``, ``qos-p<n>-bw`` and ``qos-p<n>-lat``."""
    rows = datasets.load("nexgen").filter(datasets.pl.col("row_id").str.starts_with("qos-p"))
    by_id = {r["row_id"]: r for r in rows.iter_rows(named=True)}
    table = {}
    for n in range(1, 6):
        iops, bw, lat = (by_id.get(f"qos-p{n}-{k}") for k in ("iops", "bw", "lat"))
        if iops is None or bw is None or lat is None:
            raise datasets.DatasetError(
                f"datasets/nexgen.csv: policy {n} needs rows qos-p{n}-iops, -bw and -lat"
            )
        level = iops["configuration"].split(" ", 2)[2]  # "Policy 1 Mission-critical" -> "Mission-critical"
        table[f"Policy {n}"] = ServiceLevel(
            min_iops=iops["si_value"], min_bandwidth=bw["si_value"], max_latency=lat["si_value"],
            name=f"Policy {n}", level=level, priority=LEVELS.index(level) + 1,
        )  # fmt: skip
    return table


def lun_levels() -> dict[str, ServiceLevel]:
    """Each modelled LUN's service level, as the study assigned them (Figure 9)."""
    table = policy_table()
    return {lun: table[policy] for lun, (policy, _sp) in LUN_POLICY.items()}
