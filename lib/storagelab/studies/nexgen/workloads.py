"""The NexGen study's scenario-1 workloads: OLTP and Exchange beside the 600-desktop boot storm, and
beside 600 Login VSI desktops."""

from __future__ import annotations

from storagelab.provenance import Param
from storagelab.workloads import applications as apps

_DOC = "000_95d1997ae9f905ef.txt (NexGen N5, Principled Technologies)"
DESKTOPS = 600
BOOT_DURATION_S = 12.0
IOS_PER_ORDER = 15
#: The broker's power-on interval, fitted (by arithmetic) on the published storm length s1-boot-time:
#: (5 min x 60 - one 12 s boot) / 600 desktops. The storm length the simulation reports is then this
#: arithmetic again, so that claim is ``derived``. A test re-derives the stored value.
POWER_ON_INTERVAL = Param(
    0.48, "s", "fit",
    f"{_DOC}: 'The boot storm completed in about five minutes' (s1-boot-time): (300 s - 12 s boot) / 600 desktops",
    fitted_on=("s1-boot-time",),
)  # fmt: skip


def _base() -> list[apps.ApplicationWorkload]:
    return [apps.dvd_store(ios_per_order=IOS_PER_ORDER), apps.loadgen_outlook_200()]


def boot_storm_workload() -> apps.ApplicationWorkload:
    """OLTP + Exchange + the 600-desktop boot storm (broker interval as fitted)."""
    storm = apps.boot_storm(
        desktops=DESKTOPS, power_on_rate=1 / POWER_ON_INTERVAL.value, boot_duration=BOOT_DURATION_S
    ).with_param("power_on_interval", POWER_ON_INTERVAL)
    return apps.combine("boot storm window", [*_base(), storm])


def steady_workload() -> apps.ApplicationWorkload:
    """OLTP + Exchange + 600 Login VSI desktops at steady state."""
    return apps.combine("Login VSI window", [*_base(), apps.login_vsi(desktops=600, ramp=False)])


def storm_length_s() -> float:
    """Boot storm length (s) of the generator: desktops x power-on interval + one boot."""
    return DESKTOPS * POWER_ON_INTERVAL.value + BOOT_DURATION_S
