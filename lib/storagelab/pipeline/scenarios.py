"""Scenario functions a sweep can run (``scenario: storagelab.pipeline.scenarios:<name>``): each takes its
parameters and ``seed`` and returns ``{metric: value}``; a ``validate`` attribute checks a point's
parameters before any run starts."""

from __future__ import annotations

from storagelab import theory
from storagelab.kernel import Exponential, FixedSampler, OpenSource, Station
from storagelab.kernel.simulation import simulate


def mmc_queue(rho: float = 0.9, servers: int = 4, mean_service_ms: float = 1.0, duration_s: float = 20.0,
              seed: int = 1) -> dict[str, float]:  # fmt: skip
    """An M/M/c queue at utilisation ``rho`` for ``duration_s`` simulated seconds: mean and 99th-percentile
    response (ms) and IOPS, beside Erlang C's mean response."""
    mu = 1e3 / mean_service_ms
    lam = rho * servers * mu
    station = Station("queue", Exponential(1 / mu), servers=servers)
    src = OpenSource("arrivals", station, FixedSampler(), rate=lam)
    row = (
        simulate(station, [src], duration=duration_s, warmup=0.1 * duration_s, seed=seed, progress=False)
        .summary()
        .row(0, named=True)
    )
    return {"iops": row["iops"], "mean_ms": row["mean_ms"], "p99_ms": row["p99_ms"],
            "erlang_c_mean_ms": 1e3 * theory.mmc_mean_response(lam, mu, servers)}  # fmt: skip


def _validate_mmc(
    rho: float = 0.9, servers: int = 4, mean_service_ms: float = 1.0, duration_s: float = 20.0
) -> None:
    if not 0 < rho < 1:
        raise ValueError(f"rho must be in (0, 1) for a stable queue, got {rho!r}")
    if not isinstance(servers, int) or servers < 1:
        raise ValueError(f"servers must be a whole number >= 1, got {servers!r}")
    if not mean_service_ms > 0 or not duration_s > 0:
        raise ValueError("mean_service_ms and duration_s must be positive")


mmc_queue.validate = _validate_mmc  # type: ignore[attr-defined]


def vsan_iometer(configuration: str = "all-flash NVMe", vms: int = 32, quick: bool = True,
                 overrides: dict | None = None, seed: int = 1) -> dict[str, float]:  # fmt: skip
    """The Virtual SAN study's Iometer test (one QD1 4 KB 70/30 worker per VM) on the preset with
    ``overrides``: IOPS, mean and 99th-percentile latency (ms), and the % of IOs under 1, 2 and 5 ms."""
    from storagelab.studies.vsan import preset
    from storagelab.studies.vsan.claims import _times
    from storagelab.studies.vsan.workloads import vsan_iometer as iometer

    res = preset.vsan(configuration, **(overrides or {})).run(
        iometer(vms=vms), seed=seed, **_times(quick, vms)
    )
    row = res.summary().row(0, named=True)
    curve = res.service_level_curve((1, 2, 5))
    shares = {
        f"under_{t:g}ms_pct": 100 * s
        for t, s in zip(curve["threshold_ms"], curve["share_under"], strict=True)
    }
    return {"iops": row["iops"], "mean_ms": row["mean_ms"], "p99_ms": row["p99_ms"], **shares}


def _validate_vsan(configuration: str = "all-flash NVMe", vms: int = 32, quick: bool = True,
                   overrides: dict | None = None) -> None:  # fmt: skip
    from storagelab.studies.vsan import preset

    if not isinstance(vms, int) or not 1 <= vms <= 1024:
        raise ValueError(f"vms must be a whole number in 1..1024, got {vms!r}")
    preset.vsan(configuration, **(overrides or {}))


vsan_iometer.validate = _validate_vsan  # type: ignore[attr-defined]
