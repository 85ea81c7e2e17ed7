"""Why each claim's role, sensitivity or result moved when the calibration's rules were applied the same
way in every study (the committed run ``notebooks/calibration-quick-round2.csv`` against the current
one): notebook 10 shows :data:`REASONS` beside :meth:`CalibrationResult.changes
<storagelab.calibration.CalibrationResult.changes>`, and a test checks that every claim that moved has one."""

from __future__ import annotations

_SATF = (
    "the drives order queued commands by access time (seek and rotation), the one physical choice for every "
    "preset; shortest seek first had been kept because it passed Tables 2-4"
)
_HELD = (
    "the sensitivity runs hold fitted parameters: the value is arithmetic on the fitted director pass, so it "
    "passes at every scale"
)

#: Per claim id, why it moved.
REASONS: dict[str, str] = {
    # ds5020
    "ds5020-t2-latency-t3": _SATF + ": the read latency falls below Table 2's",
    "ds5020-t2-latency-t4": _SATF + ": the read latency falls below Table 2's (fitted: Figure 16's run)",
    "ds5020-t4-web-iops": _SATF + ": the web server IOPS rise past Table 4's",
    "ds5020-t3-iops": _SATF + ": Orion's small IOPS rise past Table 3's",
    # vplex
    "vplex-readhit-latency": _HELD + " (the fitted claim itself)",
    "vplex-readmiss-adder": _HELD + " (two passes)",
    "vplex-write-adder-local": _HELD + " (two passes)",
    "vplex-write-adder-metro": _HELD + " (three passes and the round trip, which is not a capacity)",
    "geo-drain-rate-limit": (
        "derived: once the delta buffer is full the throttle admits host writes at the WAN's drain rate, so "
        "the ratio is 1 by the model's construction"
    ),
}
