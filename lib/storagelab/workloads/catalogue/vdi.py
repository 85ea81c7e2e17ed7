"""Virtual desktops: a boot storm, and the Login VSI steady state."""

from __future__ import annotations

from storagelab.workloads.access_spec import AccessSpec, SizeShare
from storagelab.workloads.application import (
    ApplicationWorkload,
    Stream,
    assumed,
    documented,
    fit_default,
    need_count,
    need_positive,
)
from storagelab.workloads.catalogue._sources import ILIO, NEXGEN
from storagelab.workloads.phases import Phase, PhaseSchedule

__all__ = [
    "BOOT_DURATION_S",
    "IOS_PER_BOOT",
    "IOS_PER_BOOT_FITTED_ON",
    "SPAN_PER_DESKTOP",
    "VDI_BOOT",
    "VDI_STEADY",
    "boot_storm",
    "login_vsi",
]

#: IOs one desktop issues while it boots, fitted (by arithmetic) on the ILIO study's Tier-1 peak as the
#: study measured it, the mean over 5 minutes (see :func:`boot_storm`): 6,028 IOPS x 300 s / 75 desktops.
IOS_PER_BOOT = 24_112.0
#: The published point the IOs per desktop boot were computed from (ILIO study, 7.1.5; its window is the
#: configuration row ``boot-window``, and the 170 s storm, ``boot-time-75``, fits inside it).
IOS_PER_BOOT_FITTED_ON = ("boot-t1-peak",)
#: One boot of a desktop (s): 'a single desktop boots in about 12 s' (ILIO study, 7.1.5); the boot
#: storms of both VDI studies and the workload mix's use it.
BOOT_DURATION_S = 12.0
#: Bytes of its change disk that a desktop's Login VSI IOs address (4 GB; not stated in the studies).
SPAN_PER_DESKTOP = 4 * 10**9

#: Virtual desktop IO as Atlantis characterises it: small random IOs, 80 % writes.
VDI_STEADY = AccessSpec(name="VDI steady state", sizes=(SizeShare(size=4096, pct=100),), read_pct=20,
                        random_pct=100, align=4096)  # fmt: skip
#: A Windows 7 boot: mostly reads of the OS image.
VDI_BOOT = AccessSpec(name="VDI boot", sizes=(SizeShare(size=4096, pct=100),), read_pct=90, random_pct=100,
                      align=4096)  # fmt: skip


def boot_storm(
    name: str = "boot storm",
    *,
    desktops: int = 600,
    power_on_rate: float = 2.0,
    ios_per_boot: float = IOS_PER_BOOT,
    boot_duration: float = BOOT_DURATION_S,
    start: float = 0.0,
    volume: str = "vdi",
    span: int = 24 * 10**9,
) -> ApplicationWorkload:
    """``desktops`` desktops powered on by the broker at ``power_on_rate`` per second; each issues
    ``ios_per_boot`` IOs spread evenly over ``boot_duration`` seconds (open loop), from ``start`` s.

    The offered rate ramps up over one boot, holds at ``power_on_rate x ios_per_boot`` while desktops
    are powered on, and ramps down over the last boot; the storm lasts ``desktops / power_on_rate +
    boot_duration`` seconds. IOs land on the master image (24 GB), 90 % reads.
    """
    need_count("boot_storm", "desktops", desktops)
    need_positive("boot_storm", "power_on_rate", power_on_rate, "desktops/s")
    need_positive("boot_storm", "ios_per_boot", ios_per_boot, "IOs")
    need_positive("boot_storm", "boot_duration", boot_duration, "s")
    need_positive("boot_storm", "start", start, "s", zero=True)
    powering = desktops / power_on_rate
    peak = power_on_rate * ios_per_boot  # IO/s with power_on_rate x boot_duration desktops booting
    # desktops booting at once rise for min(powering, boot) s, hold, and fall as the first ones finish
    ramp = min(boot_duration, powering)
    hold = abs(powering - boot_duration)
    phases = []
    if start > 0:
        phases.append(Phase("before", start, 0.0))
    phases.append(Phase("ramp up", ramp, 0.0, ramp / boot_duration))
    if hold > 0:
        phases.append(Phase("storm", hold, ramp / boot_duration))
    phases.append(Phase("ramp down", ramp, ramp / boot_duration, 0.0))
    phases.append(Phase("after", 1e9, 0.0))
    params = {
        "desktops": documented(desktops, "count", f"{NEXGEN}: 'a 600-count boot storm'"),
        "power_on_interval": assumed(round(1 / power_on_rate, 6), "s", "seconds between two desktops powered on by "
                                     "the broker (1 / power_on_rate): not stated in either study"),
        "ios_per_boot": fit_default(ios_per_boot, IOS_PER_BOOT, "count", f"{ILIO}, 7.1.5: 'an average peak of 6,028 IOPS "
                                    "measured over 5 minutes' (Tier 1); the 2 min 50 s storm of 75 desktops lies "
                                    "inside that window, so 6,028 x 300 s / 75 = 24,112 IOs per desktop boot",
                                    IOS_PER_BOOT_FITTED_ON),
        "boot_duration": assumed(boot_duration, "s", f"{ILIO}, 7.1.5: a single desktop boots in about 12 s"),
        "read_pct": assumed(90, "%", "Windows boot reads the OS image; writes are page file and logs"),
    }  # fmt: skip
    stream = Stream(name, volume, VDI_BOOT, span, rate=peak, schedule=PhaseSchedule(phases))
    notes = f"peak {peak * ramp / boot_duration:,.0f} IOPS; storm length {powering + boot_duration:,.0f} s"
    return ApplicationWorkload(name, (stream,), params, notes)


def login_vsi(
    name: str = "login vsi",
    *,
    desktops: int = 600,
    iops_per_desktop: float = 10.0,
    launch_interval: float = 20.0,
    start: float = 0.0,
    ramp: bool = True,
    volume: str = "vdi",
    span: int | None = None,
) -> ApplicationWorkload:
    """Login VSI steady state: ``desktops`` x ``iops_per_desktop`` open-loop VDI IOs (4 KiB, 80 %
    writes, random over the change disks, ``span`` bytes: by default :data:`SPAN_PER_DESKTOP` per
    desktop). With ``ramp`` the sessions log on one every ``launch_interval`` seconds from ``start``, so
    the rate ramps up over desktops x launch_interval."""
    need_count("login_vsi", "desktops", desktops)
    need_positive("login_vsi", "iops_per_desktop", iops_per_desktop, "IOPS")
    need_positive("login_vsi", "launch_interval", launch_interval, "s")
    need_positive("login_vsi", "start", start, "s", zero=True)
    if span is None:
        span = desktops * SPAN_PER_DESKTOP
    phases = []
    if start > 0:
        phases.append(Phase("before", start, 0.0))
    if ramp:
        phases.append(Phase("logons", desktops * launch_interval, 0.0, 1.0))
    phases.append(Phase("steady", 1e9, 1.0))
    params = {
        "desktops": documented(desktops, "count", f"{NEXGEN}, Login VSI: 'Number of sessions: 600'"),
        "iops_per_desktop": documented(iops_per_desktop, "IOPS/desktop", f"{NEXGEN}, Login VSI: 'About 10 to 15 IOPS per "
                                       "desktop at steady state, 100 percent concurrency' (low end)"),
        "launch_interval": documented(launch_interval, "s", f"{NEXGEN}, Login VSI: 'Launch interval: 20 seconds'"),
        "write_pct": assumed(80, "%", "Atlantis: VDI workloads are 'random and write intensive (80% write, 20% "
                             "read)'; not stated in the studies"),
        "io_size": assumed(4, "KiB", f"{ILIO}, 7.1.3: Iometer MB/s / IOPS = 4.0 KiB for the VDI pattern"),
    }  # fmt: skip
    sched = PhaseSchedule(phases) if len(phases) > 1 else None
    stream = Stream(name, volume, VDI_STEADY, span, rate=desktops * iops_per_desktop, schedule=sched)
    return ApplicationWorkload(name, (stream,), params)
