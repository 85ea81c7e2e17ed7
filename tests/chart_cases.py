"""Charts given values their scales cannot show, for tests/test_charts.py and tests/test_browser.py."""

from __future__ import annotations

import polars as pl

from storagelab.analysis.comparison import Comparison, Settings
from storagelab.analysis.workload_mix import WorkloadMix

#: Notebook 19's headroom table as committed in 9c8f3ae (the table behind its headroom chart): the NexGen's
#: interval reaches -0.142, which collapsed the chart's log x axis (every mark at the left edge, no tick).
NEGATIVE_LOW_ROWS = [
    ("NexGen N5-150, QoS on", "model", "fit", 0.9612, -0.142413, 2.06481, "found", "oltp p95_ms <= 30 ms", "NL-SAS 2"),
    ("Virtual SAN all-flash, 4 hosts", "model", "fit", 1.61049, 1.52997, 1.69101, "found", "oltp p95_ms <= 30 ms", "host 1 vSAN IO path"),
    ("Virtual SAN hybrid (E5 v3), 4 hosts", "model", "fit", 1.61049, 1.52997, 1.69101, "found", "exchange mean_ms <= 20 ms", "host 1 vSAN IO path"),
    ("XtremIO, 1 X-Brick", "model", "fit", 4.0, None, None, "holds at the highest load", "the service levels still hold at the highest multiplier 4", ""),
    ("EqualLogic PS6100E", "model", "fit", 0.125, None, None, "fails at the lowest load", "oltp p95_ms <= 30 ms", ""),
    ("Virtual SAN all-flash, published curve", "published curve", "fit", 1.13879, 1.08185, 1.19573, "at least (the published range ends)", "beyond its published range", "the curve"),
    ("Virtual SAN all-flash, published curve", "published curve", "lower", 0.957603, 0.909723, 1.00548, "at least (the published range ends)", "beyond its published range", "the curve"),
    ("Virtual SAN all-flash, published curve", "published curve", "upper", 1.24186, 1.17976, 1.30395, "at least (the published range ends)", "beyond its published range", "the curve"),
]  # fmt: skip


def comparison_with_values_a_log_scale_cannot_show() -> Comparison:
    """A :class:`Comparison` whose table is :data:`NEGATIVE_LOW_ROWS` and whose runs include a class with
    nothing measured at one multiplier (ratio 0), for its headroom and latency charts (both log scales)."""
    mix = WorkloadMix.from_mapping({"name": "NexGen study mix", "classes": [
        {"name": "oltp", "workload": "oltp", "size": 4, "service_level": {"metric": "p95_ms", "limit_ms": 30}}]})  # fmt: skip
    keys = ("architecture", "kind", "bound", "headroom", "low", "high", "status", "fails_first", "bottleneck")
    rows = [dict(zip(keys, r, strict=True)) | {"bottleneck_utilisation": 0.9} for r in NEGATIVE_LOW_ROWS]
    runs = pl.DataFrame(
        {
            "architecture": ["XtremIO, 1 X-Brick"] * 3 + ["EqualLogic PS6100E"] * 3,
            "bound": ["fit"] * 6,
            "seed": [1] * 6,
            "multiplier": [0.5, 1.0, 2.0] * 2,
            "class": ["oltp"] * 6,
            "service_level": ["oltp p95_ms <= 30 ms"] * 6,
            "ratio": [0.0, 0.2, 0.5, 0.9, 1.4, 3.0],  # 0: nothing measured at the lowest load
        }
    )
    return Comparison(mix, [], Settings(), rows, [runs])
