"""Virtual SAN scenarios: IOPS at 4-64 VMs and the share of IOs under 1/2/5/10/30 ms, three configurations.

:func:`fit` derives the model's two fitted parameters by exact MVA of its network (a delay for the
software path, network and devices, and one single-server queue per host visited 0.325 times per IO:
70 % reads on one copy, 30 % writes on two, over four hosts): the delay on the all-flash IOPS at 16
and 64 VMs, and each hybrid configuration's host time on its IOPS at 64 VMs (the delay is shared: same
vSAN version and network). The simulation then predicts everything else, including the shares.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import least_squares

from storagelab import devices, theory
from storagelab.calibration.claims import Point, Scenario, published_rows, published_value
from storagelab.studies.fits import fits_of
from storagelab.studies.vsan import preset
from storagelab.workloads.applications import vsan_iometer

STUDY = "vsan"
READ, HOSTS, COPIES = 0.7, 4, 2
VISITS = (READ + (1 - READ) * COPIES) / HOSTS  # host-queue visits per VM IO
_TAG = {"hybrid Xeon E5 v2": "hyb-v2", "hybrid Xeon E5 v3": "hyb-v3", "all-flash NVMe": "af"}
THRESHOLDS_MS = (1, 2, 5, 10, 30)


def _device_ms(configuration: str) -> float:
    """Mean device time per VM IO (ms): reads on the capacity SSD or the read-cache SSD, writes
    acknowledged by the write buffer (NVMe or SATA SSD) at its buffered write latency."""
    sata, nvme = devices.preset("SATA SSD"), devices.preset("NVMe SSD")
    write = nvme if configuration == "all-flash NVMe" else sata
    return 1e3 * (READ * sata.mean_service_time(True, 4096) + (1 - READ) * write.host_write_time(4096))


def mva_iops(vms: int, stack_ms: float, node_us: float, configuration: str) -> float:
    """Throughput (IOPS) of ``vms`` QD1 workers by exact MVA of the model network."""
    demands = [1e-3 * (stack_ms + _device_ms(configuration))] + [node_us * 1e-6 * VISITS] * HOSTS
    kinds = ["delay"] + ["queue"] * HOSTS
    return float(theory.mva_closed(vms, demands, 0.0, kinds).throughput[-1])


def fit() -> tuple[float, dict[str, float]]:
    """(stack delay in ms, host time per visit in us per configuration), fitted as the module says."""
    af = "all-flash NVMe"
    pts = [(16, published_value("vsan-af-iops-vm16")), (64, published_value("vsan-af-iops-vm64"))]

    def resid(x: np.ndarray) -> list[float]:
        return [mva_iops(n, x[0], x[1], af) / x_pub - 1 for n, x_pub in pts]

    sol = least_squares(resid, x0=[0.5, 300.0], bounds=([0.0, 1.0], [10.0, 1e4]), xtol=1e-12, ftol=1e-12)
    stack = float(sol.x[0])
    node = {af: float(sol.x[1])}
    for conf in ("hybrid Xeon E5 v2", "hybrid Xeon E5 v3"):
        target = published_value(f"vsan-{_TAG[conf]}-iops-vm64")
        r = least_squares(lambda x, c=conf, t=target: [mva_iops(64, stack, x[0], c) / t - 1], x0=[800.0],
                          bounds=([1.0], [1e5]), xtol=1e-12, ftol=1e-12)  # fmt: skip
        node[conf] = float(r.x[0])
    return stack, node


def _times(quick: bool, vms: int) -> dict[str, float]:
    if quick:
        return {"duration": 1.0 if vms >= 32 else 2.5, "warmup": 0.3}
    return {"duration": 10.0 if vms >= 32 else 30.0, "warmup": 2.0}


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
                Point(STUDY, rid, f"{conf}, {vms} VMs: " + ("IOPS" if t is None else f"% of IOs under {t:g} ms"),
                      "two-sided", "the text's 'over' rounds a measured figure" if t is None else "")
                for rid, t in pts
            )  # fmt: skip

            def run(
                seed: int, quick: bool, conf: str = conf, vms: int = vms, pts=tuple(pts)
            ) -> dict[str, float]:
                res = preset.vsan(conf).run(vsan_iometer(vms=vms), seed=seed, **_times(quick, vms))
                iops = float(res.summary()["iops"][0])
                curve = res.service_level_curve(THRESHOLDS_MS)
                share = dict(
                    zip(curve["threshold_ms"].to_list(), curve["share_under"].to_list(), strict=True)
                )
                return {rid: iops if t is None else 100 * share.get(t, math.nan) for rid, t in pts}

            out.append(Scenario(STUDY, f"{conf}, {vms} VMs", points, run))
    return out


def fitted_on() -> dict[str, tuple[str, ...]]:
    """Fitted parameters of the three configurations and the points they were fitted on."""
    return fits_of(*(preset.vsan(c).params for c in preset.CONFIGURATIONS))
