"""The ILIO study's application generators, which no other study runs: the extra Iometer writes beside
Login VSI (7.1.4), the Login VSI run as the study ran it (:func:`login_vsi_run`) and Iometer with the
Atlantis VDI pattern (7.1.3). Login VSI and the boot storm are in :mod:`storagelab.workloads.catalogue.vdi`.

The workloads' assumed and fitted numbers carry their distributions (:data:`DISTRIBUTIONS`, with the
reason for each range; the claims module's fits add theirs) and are read through a
:class:`~storagelab.architectures.parameters.ParamSet` named :data:`WORKLOAD_SET` (:func:`reader`), one key
per quantity, so that a :func:`~storagelab.provenance.parameter_draw` reaches the streams; the ``params``
stored on a workload are the declared ones, annotated."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from storagelab.architectures.parameters import ParamSet
from storagelab.provenance import Param
from storagelab.studies.ilio.preset import TIER2_VOLUME
from storagelab.uncertainty import Choice, Distribution, LogUniform, Uniform
from storagelab.workloads.access_spec import AccessSpec, SizeShare
from storagelab.workloads.application import (
    ApplicationWorkload,
    BurstThink,
    Stream,
    assumed,
    combine,
    documented,
    need_count,
)
from storagelab.workloads.catalogue._sources import DS5020, NEXGEN
from storagelab.workloads.catalogue.vdi import SPAN_PER_DESKTOP, VDI_STEADY, login_vsi
from storagelab.workloads.phases import Phase, PhaseSchedule

_DOC = "004_496e3827612b8d9a.txt (Dell Wyse + Atlantis ILIO)"

#: Desktops the study ran on one host (7.1.6: 75 sessions).
DESKTOPS = 75
#: A desktop's virtual disk (B): 'Virtual Hard Disk Size 32GB'.
DESKTOP_DISK = 32 * 10**9


#: The ParamSet the workloads' assumed and fitted numbers are read through (the draws' preset name).
WORKLOAD_SET = "ILIO workloads"

#: Why the Tier-2 IO per running desktop (:func:`tier2_user_data`) ranges as it does: from other documents,
#: never from this study's Tier-2 rows (boot-t2-peak, vsi-t2-peak, the aggregate), which it is scored on.
TIER2_RANGE_WHY = (
    f"Uncertainty: log-uniform on 0.5-15 IOPS per desktop. Low end: {DS5020}: 'performance is usually designed "
    "around a 0.5 IOPS user profile, which is equivalent to a very heavy Exchange user', the IO one user's data "
    f"makes on a server of the era. High end: {NEXGEN}, Login VSI: 'About 10 to 15 IOPS per desktop at steady "
    "state', a whole desktop's IO, which its user data and the infrastructure serving it cannot exceed. Nothing "
    "narrows it within; the value is the range's median, sqrt(0.5 x 15) = 2.7"
)

#: Per assumed workload number read through :data:`WORKLOAD_SET` (one key per quantity): its distribution
#: and why (the fits' are in :mod:`storagelab.studies.ilio.claims`, beside the fits).
DISTRIBUTIONS: dict[str, tuple[Distribution, str]] = {
    "atlantis vdi: write_pct": (Uniform(60.0, 90.0), "Uncertainty: uniform on 60-90 %: the pattern's own "
                                "definition is not quoted; Atlantis's '80% write' is a characterisation, and VDI "
                                "Iometer patterns of the era run from 60 to 90 % writes"),
    "atlantis vdi: outstanding": (Choice((1, 2, 4), (2.0, 1.0, 1.0)), "Uncertainty: 1 (Iometer's default, twice as "
                              "likely), 2 or 4 outstanding IOs per worker: the document does not state them"),
    "login vsi: write_pct": (Uniform(50.0, 85.0), "Uncertainty: uniform on 50-85 %: Atlantis's 80 % is a vendor's "
                             "characterisation; Login VSI's medium workload is reported from about half to over "
                             "four fifths writes"),
    "login vsi: io_size": (Choice((4, 8, 16)), "Uncertainty: 4, 8 or 16 KiB, equally likely: the 4 KiB is the "
                           "study's Iometer pattern, not a measurement of Login VSI, whose desktops' IOs are mostly "
                           "small but of mixed size"),
    "extra writes: io_size": (Choice((24,)), "Uncertainty: only 24 KiB: the screenshot's spinners read 24 KB and no "
                              "other reading of the garbled row fits them"),
    "tier 2: iops_per_desktop": (LogUniform(0.5, 15.0), TIER2_RANGE_WHY),
    "extra writes: timer_tick": (Choice((1.0, 15.625), (1.0, 3.0)), "Uncertainty: 15.625 ms (three times as "
                                 "likely) or 1 ms: Windows 7's timer resolution is global, so another program on the "
                                 "desktop that raises it (a media player in Login VSI's medium workload) makes "
                                 "Iometer's wait end on a 1 ms tick"),
}  # fmt: skip


def annotate(
    key: str, p: Param, dist: Distribution | None = None, why: str = "", prior: Distribution | None = None
) -> Param:
    """``p`` with its distribution and the reason: :data:`DISTRIBUTIONS`' for ``key``, or ``dist``,
    ``why`` and a fit's ``prior`` as given."""
    if dist is None:
        dist, why = DISTRIBUTIONS[key]
    return replace(p, source=f"{p.source}. {why}", uncertainty=dist, prior=prior)


def reader(params: Mapping[str, Param]) -> Callable[[str], float]:
    """The value of each of ``params`` (keyed as :data:`WORKLOAD_SET` names them) as this context reads it:
    drawn inside a parameter draw, as declared otherwise."""
    ps = ParamSet(WORKLOAD_SET, params)
    return lambda key: ps[key].value  # type: ignore[return-value]


ILIO_EXTRA_WRITE = AccessSpec(name="ILIO extra writes", sizes=(SizeShare(size=24 * 1024, pct=100),), read_pct=0,
                              random_pct=100, align=512, burst_length=3, burst_delay=0.070)  # fmt: skip


def ilio_extra_writes(
    name: str = "extra writes",
    *,
    desktops: int = DESKTOPS,
    volume: str = "vdi",
    span: int | None = None,
) -> ApplicationWorkload:
    """The ILIO study's extra Iometer load: per desktop one worker issuing bursts of 3 random 24 KiB
    writes, one outstanding, with a 70 ms transfer delay before each burst, over ``span`` bytes (by
    default each desktop's 32 GB disk, ``desktops x`` :data:`DESKTOP_DISK`). The delay ends on a tick of
    the desktop's Windows timer (``timer_tick``, :class:`BurstThink`): 70 ms takes 5 ticks, and as each
    burst starts just after a tick, a burst of 3 fast IOs repeats every 5 x 15.625 = 78.125 ms, 38.4
    IOPS per desktop, the study's 'further 38 random write IOPs per session' (without the tick: at most
    3 / 0.070 = 42.9)."""
    need_count("ilio_extra_writes", "desktops", desktops)
    if span is None:
        span = desktops * DESKTOP_DISK
    fig = f"{_DOC}, 7.1.4 Edit Access Specification screenshot"
    params = {
        "desktops": documented(desktops, "count", f"{_DOC}, 7.1.6: 75 sessions on one host"),
        "burst_length": documented(3, "count", f"{fig}: 'Burst L[ength] ... 3 I/Os'"),
        "burst_delay": documented(70, "ms", f"{fig}: 'Transfer De[lay] 70 ms'"),
        "write_pct": documented(100, "%", f"{fig}: '100% Write 0% Read'"),
        "random_pct": documented(100, "%", f"{fig}: '100% Random'"),
        "io_size": assumed(24, "KiB", f"{fig}: the size is garbled in the extracted text; the list row reads "
                           "'0MB 24KB 0B' and the spinners '0' MB, '24' KB, '0' Bytes, so 24 KiB"),
        "target_iops_per_desktop": documented(38, "IOPS/desktop", f"{_DOC}: 'a further 38 random write IOPs per session'"),
        "timer_tick": assumed(15.625, "ms", "Windows' default timer interrupt period (64 Hz), on which a wait with "
                              "a timeout ends; Iometer waits for its transfer delay that way (src/IOGrunt.cpp: "
                              "Asynchronous_Delay -> Complete_IO(timeout)) and its source never raises the timer "
                              "resolution (no timeBeginPeriod); recalled, not stated in the document"),
    }  # fmt: skip
    params["io_size"] = annotate("extra writes: io_size", params["io_size"])
    params["timer_tick"] = annotate("extra writes: timer_tick", params["timer_tick"])
    value = reader({f"extra writes: {k}": params[k] for k in ("io_size", "timer_tick")})
    think = BurstThink(3, 0.070, timer_tick=value("extra writes: timer_tick") / 1e3)
    stream = Stream(name, volume, ILIO_EXTRA_WRITE, span, workers=desktops, outstanding=1, think=think)
    workload = ApplicationWorkload(name, (stream,), params)
    return workload.with_stream(name, io_size=int(value("extra writes: io_size")) * 1024)


#: The Atlantis standard VDI Iometer pattern as the ILIO study ran it against the EqualLogic array.
ATLANTIS_VDI = AccessSpec(name="Atlantis VDI pattern", sizes=(SizeShare(size=4096, pct=100),), read_pct=20,
                          random_pct=100, align=4096)  # fmt: skip


def atlantis_vdi_iometer(
    name: str = "atlantis vdi",
    *,
    workers: int = 4,
    outstanding: int | None = None,
    volume: str = "vdi",
    span: int = DESKTOP_DISK,
) -> ApplicationWorkload:
    """Iometer with the Atlantis VDI access pattern (ILIO study 7.1.3): four workers on one desktop VM,
    4 KiB random IOs, 80 % writes (as drawn inside a parameter draw), over the desktop's 32 GB disk, each
    worker with ``outstanding`` IOs in flight (None: the assumed 1, as drawn inside a parameter draw; a
    number: the caller's)."""
    need_count("atlantis_vdi_iometer", "workers", workers)
    if outstanding is not None:
        need_count("atlantis_vdi_iometer", "outstanding", outstanding)
    params = {
        "workers": documented(workers, "count", f"{_DOC}, 7.1.3 screenshot: 'Worker 1 Worker 2 Worker 3 Worker 4'"),
        "io_size": Param(4, "KiB", "document", f"{_DOC}, 7.1.3: 7.56 MB/s / 1,934.30 IOPS = 4.0 KiB"),
        "write_pct": assumed(80, "%", "the pattern is defined in a blog post the study links but does not quote; "
                             "Atlantis describes VDI IO as '80% write, 20% read', random"),
        "outstanding": annotate("atlantis vdi: outstanding", assumed(1, "count", "not stated; 1,934 IOPS x 1.075 ms "
                               "read latency ~ 2 IOs in flight, consistent with four QD1 workers and slower writes"))
                       if outstanding is None else Param(outstanding, "count", "user", "set by the caller"),
        "span": documented(32, "GB", f"{_DOC}: desktop 'Virtual Hard Disk Size 32GB'"),
    }  # fmt: skip
    params["write_pct"] = annotate("atlantis vdi: write_pct", params["write_pct"])
    drawn = ("write_pct",) if outstanding is not None else ("write_pct", "outstanding")  # not the caller's
    value = reader({f"atlantis vdi: {k}": params[k] for k in drawn})
    write_pct = value("atlantis vdi: write_pct")
    if outstanding is None:
        outstanding = int(value("atlantis vdi: outstanding"))
    stream = Stream(
        name, volume, ATLANTIS_VDI, span, workers=workers, outstanding=outstanding, split_ops=True
    )
    return ApplicationWorkload(name, (stream,), params).with_stream(name, read_pct=100 - write_pct)


#: The stream of :func:`tier2_user_data` (its IOs' class in results); it reaches the preset's volume
#: :data:`~storagelab.studies.ilio.preset.TIER2_VOLUME`, the EqualLogic itself, not ILIO's datastore.
TIER2_STREAM = "tier 2 user data"


def tier2_user_data(
    desktops: int = DESKTOPS, *, power_on_interval: float | None = None, volume: str = TIER2_VOLUME
) -> ApplicationWorkload:
    """The IO that reaches Tier 2 without passing through ILIO (4.1: 'All VDI desktops execute from compute
    host RAM functioning as Tier 1, while all infrastructure management and user data executes from shared
    Tier 2 on the EqualLogic PS6100E'; 6.5.3: 'Four volumes in use: SQL Data, SQL Logs, Fileserver for user
    profiles & Management for system disks of Management VMs'): per running desktop ``iops_per_desktop``
    (IO/s, as drawn inside a parameter draw) of its user's profile and data on the file server and of the
    infrastructure that serves it (the broker and its SQL database, the management VMs), open loop, 4 KiB
    random IOs, 80 % writes (the desktops' own mix, :data:`~storagelab.workloads.catalogue.vdi.VDI_STEADY`),
    over ``desktops`` x 4 GB of the array.

    With ``power_on_interval`` (s) the desktops are being powered on one every ``power_on_interval``
    seconds from t = 0 (the boot storm), and each counts from its power-on: the rate ramps to its full
    value over ``desktops x power_on_interval`` s. Without, all ``desktops`` run (Login VSI at full load).
    The rate is one number for a running desktop, with or without a session: the document does not
    split Tier 2's load, and the range (:data:`TIER2_RANGE_WHY`) covers either."""
    need_count("tier2_user_data", "desktops", desktops)
    rate = assumed(
        2.7,
        "IOPS/desktop",
        "the IO per running desktop that reaches Tier 2 without ILIO (4.1, 6.5.3): its "
        "user's profile and data on the file server, and the infrastructure serving it; no document states it",
    )
    params = {
        "desktops": documented(desktops, "count", f"{_DOC}, 7.1.6: 75 sessions on one host"),
        "iops_per_desktop": annotate("tier 2: iops_per_desktop", rate),
    }  # fmt: skip
    per_desktop = reader({"tier 2: iops_per_desktop": params["iops_per_desktop"]})("tier 2: iops_per_desktop")
    schedule = None
    if power_on_interval is not None:
        if not (isinstance(power_on_interval, int | float) and power_on_interval > 0):
            raise ValueError(f"tier2_user_data: power_on_interval must be > 0 s, got {power_on_interval!r}")
        schedule = PhaseSchedule([Phase("power-ons", desktops * power_on_interval, 0.0, 1.0),
                                  Phase("all running", 1e9, 1.0)])  # fmt: skip
    stream = Stream(TIER2_STREAM, volume, VDI_STEADY, desktops * SPAN_PER_DESKTOP, rate=desktops * per_desktop,
                    schedule=schedule)  # fmt: skip
    return ApplicationWorkload(TIER2_STREAM, (stream,), params)


def login_vsi_run(
    desktops: int = DESKTOPS, *, extra_writes: bool = True, user_data: bool = True
) -> ApplicationWorkload:
    """The study's Login VSI run at steady state (7.1.6): ``desktops`` Login VSI sessions, each over its
    own change disk (``desktops x`` :data:`~storagelab.workloads.catalogue.vdi.SPAN_PER_DESKTOP`), and,
    with ``extra_writes``, each session's 38 extra Iometer write IOPS over its 32 GB disk
    (:func:`ilio_extra_writes`); with ``user_data``, each desktop's user data and infrastructure IO on
    Tier 2 (:func:`tier2_user_data`, stream :data:`TIER2_STREAM` on volume :data:`TIER2_VOLUME`, which
    does not pass through ILIO). The one place the study's scenario, its scale-out and its sweeps build
    this load, so that the span always follows the desktops run."""
    need_count("login_vsi_run", "desktops", desktops)
    vsi = login_vsi(desktops=desktops, ramp=False, span=desktops * SPAN_PER_DESKTOP)
    params = {k: annotate(f"login vsi: {k}", p) if f"login vsi: {k}" in DISTRIBUTIONS else p
              for k, p in vsi.params.items()}  # fmt: skip
    value = reader({f"login vsi: {k}": params[k] for k in ("write_pct", "io_size")})
    vsi = replace(vsi, params=params).with_stream(
        vsi.name,
        read_pct=100 - value("login vsi: write_pct"),
        io_size=int(value("login vsi: io_size")) * 1024,
    )
    parts = [vsi]
    if extra_writes:
        parts.append(ilio_extra_writes(desktops=desktops, span=desktops * DESKTOP_DISK))
    if user_data:
        parts.append(tier2_user_data(desktops))
    return combine("Login VSI + Iometer" if extra_writes else "Login VSI", parts)
