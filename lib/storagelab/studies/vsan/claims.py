"""Virtual SAN scenarios: IOPS at 4-64 VMs and the share of IOs under 1/2/5/10/30 ms, three configurations.

:func:`fit` derives the model's one fitted parameter, the software/network delay, on the all-flash
IOPS at 16 VMs, where the QD1 workers' IOPS measure a latency: by simulation of the preset (the quick
calibration's runs, each at its protocol hit ratio, as the scenario runs it), from a bracket that MVA of its network gives (a delay for the software path,
network and flash; per host its CPU cores, visited 0.325 times per IO: 70 % reads on one copy, 30 %
writes on two, over four hosts, at the per-IO cost the preset states; and its 10 GbE port). The hybrids share it (same vSAN version and network). The IOPS at 32 and 64 VMs are
predictions: no fitted parameter sets a capacity.

The read caches (the hybrids' S3700s and, vSAN 5.5 running the all-flash cluster as a hybrid disk group,
its P3700s) are not warm: the study cleared the read cache and write buffer before each
VM count and measured 90 minutes after a 30-minute ramp, three times, while a VM's random 4 KiB IOs at
QD1 touch only part of its 7.5 GB in that time. The scenarios set each hybrid's read hit ratio from
that protocol (:func:`protocol_hit_ratio`), so read misses reach the 10K drives, at every VM count by
the same method (:data:`HIT_RATIO_METHOD`, ``fixed-point``): the hit ratio the protocol gives
at the rate the model itself runs at that hit ratio. The published 64-VM IOPS are therefore
predictions, not inputs. (Before, the 64-VM hit ratio was computed from the published IOPS, which made
them fitted; the two hybrids differ only in processors that are far from busy, so at their own fixed
points they predict about the same IOPS.) The simulation predicts everything else, including the shares.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping

import numpy as np
from scipy.optimize import brentq

from storagelab import devices, theory
from storagelab.architectures.parameters import ParamSet
from storagelab.calibration.claims import Point, Scenario, published_rows, published_value
from storagelab.components.tiering import cold_start_hit_ratio
from storagelab.kernel.simulation import SimulationResult
from storagelab.provenance import Param, current_capacity_scale, current_draw_key
from storagelab.studies.fits import fits_of
from storagelab.studies.vsan import preset
from storagelab.studies.vsan.workloads import SPAN_PER_VM, vsan_iometer
from storagelab.uncertainty.distributions import Choice

STUDY = "vsan"
READ, HOSTS, COPIES = 0.7, 4, 2
VISITS = (READ + (1 - READ) * COPIES) / HOSTS  # host-queue visits per VM IO
_TAG = {"hybrid Xeon E5 v2": "hyb-v2", "hybrid Xeon E5 v3": "hyb-v3", "all-flash NVMe": "af"}
THRESHOLDS_MS = (1, 2, 5, 10, 30)


#: The test protocol (document, Test Configuration): 'The workload ramps for 30 minutes and then runs
#: for 90 minutes'; 'Each version of the test was run three times and the results were averaged';
#: the write buffer and read cache 'were cleared between the different tests' but not between the
#: three instances of one. Times in seconds from the clear; the instances taken back to back.
RAMP_S, RUN_S, INSTANCES = 1800.0, 5400.0, 3
BLOCK, DRIVES_PER_HOST = 4096, 4


def measured_windows() -> list[tuple[float, float]]:
    """The measured 90 minutes of each of the three instances, in seconds after the caches were cleared."""
    period = RAMP_S + RUN_S
    return [(k * period + RAMP_S, (k + 1) * period) for k in range(INSTANCES)]


def read_hit_ratio(iops_per_vm: float) -> float:
    """Share of a VM's reads that find their 4 KiB block in its host's read cache or write buffer, over
    the study's measured windows, when each VM's IOs (reads and writes alike bring a block in) fall
    uniformly on its 7.5 GB at ``iops_per_vm``
    (:func:`~storagelab.components.tiering.cold_start_hit_ratio`). The hybrid read cache (560 GB per
    host) holds all a host's data (at most 240 GB), so only the time since the clear limits it."""
    return cold_start_hit_ratio(iops_per_vm, SPAN_PER_VM / BLOCK, measured_windows())


def _hdd_read_s(vms: int) -> float:
    """Mean 4 KiB random read time (s) of a capacity 10K drive over its share of the data (the VMs'
    disks x copies over the cluster's drives, on the drive's outer cylinders)."""
    span = int(vms * SPAN_PER_VM * COPIES / (HOSTS * DRIVES_PER_HOST))
    return devices.preset("10K SAS").mean_service_time(True, BLOCK, span=span)


def _device_ms(configuration: str, hit: float = 1.0) -> float:
    """Mean flash time per VM IO (ms): the ``hit`` share of the reads on the cache device (NVMe or SATA
    SSD), in the all-flash cluster the rest on a capacity SSD; writes acknowledged by the cache device's
    write buffer at its buffered write latency."""
    p = preset.params(configuration)
    read = write = devices.preset(p["cache_device"].value)  # reads that hit and writes on the cache device
    ms = 1e3 * (READ * hit * read.mean_service_time(True, 4096) + (1 - READ) * write.host_write_time(4096))
    if configuration == "all-flash NVMe":  # read misses on a capacity SSD (a hybrid's queue at its drives)
        ms += (
            1e3 * READ * (1 - hit) * devices.preset(p["capacity_device"].value).mean_service_time(True, 4096)
        )
    return ms


def _host_cpu_s(configuration: str) -> tuple[float, int]:
    """(CPU seconds per host visit, cores per host) of the preset's host CPU stage."""
    p = preset.params(configuration)
    cores = int(p["host_sockets"].value * p["cores_per_socket"].value)
    return p["cpu_cycles_per_io"].value / p["core_clock"].si, cores


def _stack_visits(share: float, copies: int) -> float:
    """The software/network delay's mean per VM IO in units of the delay: the share spent once per IO,
    plus the share spent per copy, once for a read and, for a write, the mean of the slowest of
    ``copies`` parallel paths, taken as for exponential times (the harmonic number H_copies: 1.5 for two;
    the preset's lognormal delays have the scv of an exponential)."""
    slowest = sum(1 / k for k in range(1, copies + 1))
    return (1 - share) + share * (READ + (1 - READ) * slowest)


def mva_iops(vms: int, stack_ms: float, configuration: str, hit: float = 1.0) -> float:
    """Throughput (IOPS) of ``vms`` QD1 workers by MVA of the model network: a delay (software,
    network, flash), per host its CPU cores (``c`` servers, by Seidmann's approximation: a queue of
    demand ``D/c`` and a delay of ``D (c - 1)/c``) and its 10 GbE port (a queue), and in the hybrids
    one queue per capacity drive, which the read misses (``1 - hit`` of the reads) visit uniformly."""
    cpu_s, cores = _host_cpu_s(configuration)
    cpu_d = cpu_s * VISITS
    p = preset.params(configuration)
    link_d = BLOCK / p["host_link_rate"].si * VISITS
    stack_d = stack_ms * _stack_visits(float(p["copy_path_share"].value), int(p["copies"].value))
    demands = [1e-3 * (stack_d + _device_ms(configuration, hit)) + cpu_d * (cores - 1) / cores]
    demands += [cpu_d / cores] * HOSTS + [link_d] * HOSTS
    kinds = ["delay"] + ["queue"] * (2 * HOSTS)
    if configuration != "all-flash NVMe" and hit < 1.0:
        drives = HOSTS * DRIVES_PER_HOST
        demands += [READ * (1 - hit) * _hdd_read_s(vms) / drives] * drives
        kinds += ["queue"] * drives
    return float(theory.mva_closed(vms, demands, 0.0, kinds).throughput[-1])


def cold_cache_hit_ratio(vms: int, configuration: str, seed: int = 1) -> float:
    """The hybrid read hit ratio of the study's protocol at ``vms`` VMs at the model's own rate: the
    fixed point of :func:`read_hit_ratio` at the per-VM IOPS the preset, simulated (quick runs on
    ``seed``) at that hit ratio, gives (fewer hits, more drive reads, fewer IOPS, a slower warm-up;
    found to 0.001 by :func:`monotone_fixed_point`). A replication on seed ``k`` takes the fixed point
    of seed ``k``'s runs, so the fixed point's own noise (a few thousandths of hit ratio) is in the
    replications' spread and their interval, not a constant shared by all. The all-flash
    cluster too: its P3700 is a hybrid read cache in front of the S3500s (marked as HDDs). Inside :func:`~storagelab.provenance.capacity_scale` the
    preset is scaled, and so is its rate: each scale has its own fixed point (remembered per process); so
    inside :func:`~storagelab.provenance.parameter_draw`, each draw."""
    return _cold_cache_hit_ratio(
        vms, _same_model(configuration), current_capacity_scale(), seed, current_draw_key()
    )


def _same_model(configuration: str) -> str:
    """The first configuration whose parameter values are all equal to ``configuration``'s: the same
    model under another name, whose fixed point is then computed once (none today: the hybrids' hosts
    have different processors)."""
    values = {k: p.value for k, p in preset.params(configuration).items()}
    return next(
        c for c in preset.CONFIGURATIONS if {k: p.value for k, p in preset.params(c).items()} == values
    )


@functools.lru_cache(maxsize=64)
def _cold_cache_hit_ratio(vms: int, configuration: str, scale: float, seed: int, draw: tuple = ()) -> float:
    """:func:`cold_cache_hit_ratio` at capacity scale ``scale`` and parameter draw ``draw`` (those in force
    when called: only the memo's key)."""
    return monotone_fixed_point(
        lambda h: read_hit_ratio(simulated_iops(configuration, vms, h, None, seed) / vms)
    )


def monotone_fixed_point(f: Callable[[float], float], xtol: float = 1e-3) -> float:
    """A fixed point ``h = f(h)`` of a non-decreasing ``f`` from [0, 1] to [0, 1], found to ``xtol`` by
    Brent's method on ``h - f(h)`` over a bracket built from below, where runs are cheap: ``f(0)`` is a
    lower bound (at the fixed point ``h = f(h) >= f(0)``), and from there secant steps on ``h - f(h)``,
    each landing ``xtol`` past the root it estimates, until ``h - f(h) > 0``. Here ``f`` is a simulation
    whose cost grows with ``h`` (more read hits, more IOPS to simulate), so the bracket avoids the runs
    near ``h = 1`` that a search over all of [0, 1] makes first (``f`` is noisy, so two brackets may find
    different roots within that noise). Each ``f(h)`` is computed once."""
    seen: dict[float, float] = {}

    def gap(h: float) -> float:
        if h not in seen:
            seen[h] = h - f(h)
        return seen[h]

    lo, g_lo = 0.0, gap(0.0)
    if g_lo >= 0:  # f(0) = 0
        return 0.0
    h = min(1.0, -g_lo)  # f(0): a lower bound
    while (g := gap(h)) < 0:  # h < 1 here: gap(1) = 1 - f(1) >= 0
        slope = (g - g_lo) / (h - lo)
        estimate = h - g / slope if slope > 0 else 1.0
        lo, g_lo = h, g
        h = min(1.0, max(estimate, h) + xtol)
    return h if g == 0 else float(brentq(gap, lo, h, xtol=xtol))


#: The replications the stack delay is fitted over: the committed quick calibration's (seeds 1 to 3).
FIT_SEEDS = (1, 2, 3)


def fit() -> float:
    """The software/network delay (ms), fitted as the module says: the largest delay, stated to 0.0001 ms,
    at which the simulated all-flash cluster at 16 VMs (quick runs, mean over :data:`FIT_SEEDS`, each at
    its seed's protocol hit ratio for that delay, as the scenario runs it) still runs at the published
    'over 22,300' IOPS, found by bisection from the bracket the MVA gives and
    checked at the stated value."""
    af, vms = "all-flash NVMe", 16
    published = published_value("vsan-af-iops-vm16")

    def iops(stack_ms: float) -> float:
        # each seed's run at the read hit ratio the study's protocol gives at that delay (its fixed point)
        runs = []
        for k in FIT_SEEDS:
            hit = monotone_fixed_point(
                lambda h, k=k: read_hit_ratio(simulated_iops(af, vms, h, stack_ms, k) / vms)
            )
            runs.append(simulated_iops(af, vms, hit, stack_ms, k))
        return float(np.mean(runs))

    guess = float(brentq(lambda s: mva_iops(vms, s, af) / published - 1, 1e-6, 10.0, xtol=1e-10))
    lo, hi = 0.5 * guess, 1.5 * guess
    if not iops(lo) >= published > iops(hi):
        raise RuntimeError(f"the fit's bracket [{lo:.4f}, {hi:.4f}] ms does not contain the published IOPS")
    while hi - lo > 1e-4:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if iops(mid) >= published else (lo, mid)
    # the value stated to 0.0001 ms, checked where it is stated (the runs are not exactly monotone in it)
    value = math.floor(lo * 1e4) / 1e4
    while iops(value) < published:
        value = round(value - 1e-4, 4)
    return value


def simulated_iops(
    configuration: str, vms: int, hit: float, stack_ms: float | None = None, seed: int = 1
) -> float:
    """IOPS of the preset (quick run, ``seed``) with the given read-cache hit ratio and
    software/network delay (ms; None: the preset's own, fitted, which a capacity scale holds as the
    sensitivity check holds every fitted parameter, where a value given here would be the user's and
    scaled): what the hybrids' cold-cache fixed point solves on. The hybrids' capacity drives reorder
    their queues (by access time) and take the write log's destage, which the MVA's FCFS drives do
    not, so the fixed point is found by simulation."""
    run = _protocol_run(
        configuration, vms, hit, stack_ms, seed, True, current_capacity_scale(), current_draw_key()
    )
    return float(run.summary()["iops"][0])


@functools.lru_cache(maxsize=16)
def _protocol_run(
    configuration: str,
    vms: int,
    hit: float,
    stack_ms: float | None,
    seed: int,
    quick: bool,
    scale: float,
    draw: tuple = (),
) -> SimulationResult:
    """One run of the study's Iometer protocol on the preset with read-cache residency ``hit`` and
    software/network delay ``stack_ms`` (ms; None: the preset's own), on ``seed``, at capacity scale
    ``scale`` and parameter draw ``draw`` (:func:`~storagelab.provenance.current_draw_key`; those in force:
    only the memo's key, so a run under one draw is not served under another), remembered per process: the
    fixed point's last
    evaluation is the run a hybrid's scenario makes at that hit ratio (Brent's method returns a point
    it evaluated), so the scenario takes it instead of simulating it again."""
    given = {} if stack_ms is None else {"stack_delay": stack_ms}
    topo = preset.vsan(configuration, read_cache_resident=hit, **given)
    return topo.run(vsan_iometer(vms=vms), seed=seed, **_times(quick, vms))


#: How the scenarios set a hybrid's read-cache residency (``read_cache_resident``) from the study's
#: protocol, the same for both hybrids and every VM count (:func:`protocol_hit_ratio`).
HIT_RATIO_METHODS = ("fixed-point", "published-rate")
HIT_RATIO_METHOD = Param(
    "fixed-point",
    "choice",
    "assumption",
    "the hybrids' read hit ratio under the study's protocol (caches cleared before each VM count; "
    "001_8f3c5816f8fbf1d5.txt, Test Configuration) is taken at the model's own rate: the fixed point of "
    "the protocol's hit ratio and the IOPS the model runs at it (cold_cache_hit_ratio), at every VM count. "
    "The alternative, 'published-rate', takes it at the IOPS the study publishes where it states them (64 "
    "VMs), which makes those IOPS a fit; the fixed point keeps them predictions. Not chosen by trying it "
    "against the published points. Uncertainty: either, equally likely: both estimate the same physical "
    "quantity (the hit ratio the real caches reached at the real rate), the published rate where it is stated "
    "and the model's own otherwise; which is nearer that physics is not known, so neither is favoured",
    choices=HIT_RATIO_METHODS,
    uncertainty=Choice(HIT_RATIO_METHODS),
)


#: The name :data:`HIT_RATIO_METHOD` is read (and drawn) under, as parameter ``hit_ratio_method``.
HIT_RATIO_PARAMS = "vsan protocol"


def _method_params() -> dict[str, Param]:
    return {"hit_ratio_method": HIT_RATIO_METHOD}


def _rate_is_published_iops(configuration: str, vms: int, method: Param | None = None) -> bool:
    """Whether the protocol's hit ratio at ``vms`` VMs is computed from the published IOPS (the
    ``published-rate`` method where the study states them), which makes that IOPS point a fit. ``method``
    defaults to :data:`HIT_RATIO_METHOD` read through a ParamSet (so a parameter draw of
    ``(HIT_RATIO_PARAMS, "hit_ratio_method")`` applies)."""
    if method is None:
        method = ParamSet(HIT_RATIO_PARAMS, _method_params())["hit_ratio_method"]
    return method.value == "published-rate" and iops_is_published(configuration, vms)


def protocol_hit_ratio(configuration: str, vms: int, seed: int = 1) -> float:
    """The read hit ratio the study's protocol gives at ``vms`` VMs (:func:`read_hit_ratio`) by
    :data:`HIT_RATIO_METHOD`: ``fixed-point`` (the one used), at the model's own rate at every VM
    count (:func:`cold_cache_hit_ratio` on ``seed``), so the published IOPS stay predictions;
    ``published-rate``, at the published IOPS where the study states them (64 VMs: a fit by arithmetic
    on those IOPS, listed by :func:`fitted_on`). The all-flash cluster's P3700 is a hybrid read cache too
    (its S3500s marked as HDDs), cleared by the same protocol."""
    if _rate_is_published_iops(configuration, vms):
        return read_hit_ratio(_published_iops(configuration, vms) / vms)
    return cold_cache_hit_ratio(vms, configuration, seed)


def _published_iops(configuration: str, vms: int) -> float | None:
    """The cluster IOPS the study states at ``vms`` VMs (only at 64), else None."""
    rid = f"vsan-{_TAG[configuration]}-iops-vm{vms}"
    return published_value(rid) if rid in published_rows() else None


def iops_is_published(configuration: str, vms: int) -> bool:
    """Whether the study states the cluster IOPS at ``vms`` VMs (only at 64)."""
    return _published_iops(configuration, vms) is not None


def protocol_iops(configuration: str, vms: int, seed: int = 1) -> float:
    """The cluster IOPS :func:`protocol_hit_ratio` takes at ``vms`` VMs: the model's (simulated, quick,
    on ``seed``) at the fixed-point hit ratio, or the published IOPS under the ``published-rate``
    method."""
    if _rate_is_published_iops(configuration, vms):
        return _published_iops(configuration, vms)
    hit = protocol_hit_ratio(configuration, vms, seed)
    return simulated_iops(configuration, vms, hit, None, seed)


def _times(quick: bool, vms: int) -> dict[str, float]:
    if quick:
        return {"duration": 1.0 if vms >= 32 else 2.5, "warmup": 0.3}
    return {"duration": 10.0 if vms >= 32 else 30.0, "warmup": 2.0}


def protocol_overrides(configuration: str, vms: int, seed: int = 1) -> dict[str, float]:
    """Preset overrides for the study's protocol at ``vms`` VMs, for a run on ``seed``: the hybrids'
    read-cache residency (the fixed point of that seed's runs)."""
    return {"read_cache_resident": protocol_hit_ratio(configuration, vms, seed)}


#: Published points per configuration and VM count: (row id, metric kind, threshold ms or None).
def _points(configuration: str) -> dict[int, list[tuple[str, float | None]]]:
    tag, rows = _TAG[configuration], published_rows()
    out: dict[int, list[tuple[str, float | None]]] = {}
    for rid, r in rows.items():
        if r["study"] != STUDY or r["configuration"] != configuration or r["vm_count"] is None:
            continue
        if not rid.startswith(f"vsan-{tag}-") or r["kind"] != "measured":
            continue
        if r["metric"] == "iops":
            out.setdefault(int(r["vm_count"]), []).append((rid, None))
        elif r["metric"] == "share_under_threshold":
            out.setdefault(int(r["vm_count"]), []).append((rid, float(r["threshold_ms"])))
    return out


def scenarios() -> list[Scenario]:
    """One scenario per configuration and VM count with published points."""
    out = []
    for conf in preset.CONFIGURATIONS:
        for vms, pts in sorted(_points(conf).items()):
            points = tuple(
                Point(STUDY, rid, f"{conf}, {vms} VMs: " + ("IOPS" if t is None else f"% of IOs under {t:g} ms"))
                for rid, t in pts
            )  # fmt: skip

            def run(
                seed: int, quick: bool, conf: str = conf, vms: int = vms, pts=tuple(pts)
            ) -> dict[str, float]:
                # the preset at its protocol's hit ratio, as the fixed point last ran it
                hit = protocol_hit_ratio(conf, vms, seed)
                res = _protocol_run(
                    conf, vms, hit, None, seed, quick, current_capacity_scale(), current_draw_key()
                )
                iops = float(res.summary()["iops"][0])
                curve = res.service_level_curve(THRESHOLDS_MS)
                share = dict(
                    zip(curve["threshold_ms"].to_list(), curve["share_under"].to_list(), strict=True)
                )
                return {rid: iops if t is None else 100 * share.get(t, math.nan) for rid, t in pts}

            out.append(Scenario(STUDY, f"{conf}, {vms} VMs", points, run))
    return out


def parameter_sets() -> list[Mapping[str, Param]]:
    """Every preset and workload parameter set this study's scenarios are built from: the three
    configurations' presets, the Iometer workload (its parameters are the same at every VM count but
    the count, which the study states) and the protocol's hit-ratio method (:data:`HIT_RATIO_PARAMS`)."""
    return [*(preset.vsan(c).params for c in preset.CONFIGURATIONS), vsan_iometer().params, _method_params()]


def fitted_on() -> dict[str, tuple[str, ...]]:
    """Fitted parameters of the three configurations and the points they were fitted on: the presets'
    own, and, under the ``published-rate`` :data:`HIT_RATIO_METHOD` only, each hybrid's read-cache residency at a
    VM count whose IOPS the study publishes, which :func:`protocol_hit_ratio` then computes from those
    IOPS (so that IOPS point is fitted). Under the ``fixed-point`` method used there is none."""
    fits = fits_of(*parameter_sets())
    for conf in preset.CONFIGURATIONS:
        for vms in sorted(_points(conf)):
            if _rate_is_published_iops(conf, vms):
                fits[f"{conf}: read_cache_resident at {vms} VMs"] = (f"vsan-{_TAG[conf]}-iops-vm{vms}",)
    return fits
