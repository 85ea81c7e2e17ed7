"""Scenario functions a sweep can run (``scenario: storagelab.pipeline.scenarios:<name>``): each takes its
parameters and ``seed`` and returns ``{metric: value}``; a ``validate`` attribute checks a point's
parameters before any run starts."""

from __future__ import annotations

import functools

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


@functools.cache
def _fitted(dataset: str) -> object:
    from storagelab.measured.system import MeasuredSystem

    return MeasuredSystem.load(dataset).fit()


def measured_fio_job(dataset: str, read_pct: int = 100, block_size: int = 4096, iodepth: int = 1,
                     pattern: str = "random", overrides: dict | None = None, seed: int = 1) -> dict[str, float]:  # fmt: skip
    """One fio job (a closed loop at ``iodepth``) on the model fitted on the measured system in folder
    ``dataset`` (``storagelab measure``), with ``overrides`` of its parameters (e.g. ``{concurrency:
    32}``): per direction IOPS and mean latency (ms). The fit is made once per worker process."""
    from storagelab.measured.model import simulate_job

    fitted = _fitted(str(dataset))
    params = fitted.build(**(overrides or {})).params.declared()
    job = {"job": f"{pattern}-r{read_pct}-{block_size}-qd{iodepth}", "pattern": pattern, "read_pct": read_pct,
           "block_size": block_size, "outstanding": iodepth}  # fmt: skip
    out = {}
    for direction, values in simulate_job(params, job, seed=seed).items():
        out[f"{direction}_iops"] = values["iops"]
        out[f"{direction}_mean_ms"] = values["lat_mean"] / 1e3
    return out


def _validate_measured(dataset: str, read_pct: int = 100, block_size: int = 4096, iodepth: int = 1,
                       pattern: str = "random", overrides: dict | None = None) -> None:  # fmt: skip
    from pathlib import Path

    if not (Path(dataset) / "measurements.csv").is_file():
        raise ValueError(f"dataset {dataset!r}: no measurements.csv there (storagelab measure writes it)")
    if not 0 <= read_pct <= 100 or iodepth < 1 or block_size < 512 or pattern not in ("random", "sequential"):
        raise ValueError(
            "read_pct must be 0..100, iodepth >= 1, block_size >= 512, pattern random or sequential"
        )


measured_fio_job.validate = _validate_measured  # type: ignore[attr-defined]
