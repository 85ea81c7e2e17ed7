"""fio's JSON results in, as one tidy dataset: one row per job, direction and metric.

Supported: the JSON that fio 3.x writes with ``--output-format=json`` (or ``json+``), from fio 3.0 on
(latencies in nanoseconds, ``lat_ns``/``clat_ns``; tested with fio 3.33, the Debian 12 package). Anything
else is refused with a :class:`FioResultError` naming the file and what is wrong: not JSON, a version that
is not fio 3.x (fio 2.x wrote latencies in microseconds under other keys), no jobs, a job that ended with
an error, or a job without the keys read here.

Columns (:data:`COLUMNS`): ``row_id`` (``job/direction/metric``), ``job``, ``pattern`` (random or
sequential), ``read_pct``, ``block_size`` (bytes), ``iodepth`` (per fio job), ``numjobs``, ``outstanding``
(iodepth x numjobs: the IOs in flight), ``direction`` (read or write), ``metric`` (:data:`METRICS`),
``value``, ``unit`` (IOPS, MB/s with MB = 10^6 bytes, us), ``stddev`` and ``samples`` (fio's per-interval
samples of IOPS and bandwidth; null for latencies), ``ios`` (IOs completed in the direction),
``runtime_s`` and ``source`` (the JSON file).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import polars as pl

from storagelab.workloads.fio import fio_size

#: Metrics per job and direction: IOPS, MB/s, mean latency and completion-latency percentiles (fio's
#: ``lat_ns`` is submission to completion; its percentiles are of ``clat_ns``, completion latency).
METRICS = ("iops", "mb_s", "lat_mean", "clat_p50", "clat_p90", "clat_p99", "clat_p99.9")
_PERCENTILES = {"clat_p50": "50.000000", "clat_p90": "90.000000", "clat_p99": "99.000000",
                "clat_p99.9": "99.900000"}  # fmt: skip
UNITS = {"iops": "IOPS", "mb_s": "MB/s"} | {m: "us" for m in METRICS[2:]}

SCHEMA = {
    "row_id": pl.String, "job": pl.String, "pattern": pl.String, "read_pct": pl.Int64,
    "block_size": pl.Int64, "iodepth": pl.Int64, "numjobs": pl.Int64, "outstanding": pl.Int64,
    "direction": pl.String, "metric": pl.String, "value": pl.Float64, "unit": pl.String,
    "stddev": pl.Float64, "samples": pl.Int64, "ios": pl.Int64, "runtime_s": pl.Float64, "source": pl.String,
}  # fmt: skip
COLUMNS = tuple(SCHEMA)

_VERSION = re.compile(r"^fio-(\d+)\.(\d+)")
_RW = {"read": (100, "sequential"), "write": (0, "sequential"), "randread": (100, "random"),
       "randwrite": (0, "random"), "rw": (None, "sequential"), "readwrite": (None, "sequential"),
       "randrw": (None, "random")}  # fmt: skip


class FioResultError(ValueError):
    """A fio JSON result the workbench cannot read; the message names the file and what is wrong."""


def fio_version(data: dict[str, Any], where: str) -> str:
    """The ``fio version`` of a parsed result, refused unless it is fio 3.x."""
    version = data.get("fio version")
    if not isinstance(version, str):
        raise FioResultError(f"{where}: no 'fio version' key: not a fio JSON result (--output-format=json)")
    m = _VERSION.match(version)
    if not m or int(m.group(1)) != 3:
        raise FioResultError(
            f"{where}: fio version {version!r} is not supported; supported: fio 3.x (3.0 and later 3 releases)"
        )
    return version


def _job_rows(job: dict[str, Any], options: dict[str, str], where: str, source: str) -> list[dict]:
    name = job.get("jobname")
    if not isinstance(name, str):
        raise FioResultError(f"{where}: a job without 'jobname'")
    where = f"{where}, job {name!r}"
    if job.get("error", 0):
        raise FioResultError(
            f"{where}: fio reports error {job['error']} for this job; its numbers are not valid"
        )
    opts = {**options, **(job.get("job options") or {})}
    rw = str(opts.get("rw", opts.get("readwrite", "read")))
    if rw not in _RW:
        raise FioResultError(f"{where}: rw={rw!r} is not supported; supported: {', '.join(_RW)}")
    read_pct, pattern = _RW[rw]
    try:
        if read_pct is None:
            read_pct = (
                int(float(opts["rwmixread"])) if "rwmixread" in opts
                else 100 - int(float(opts["rwmixwrite"])) if "rwmixwrite" in opts else 50
            )  # fmt: skip
        if "percentage_random" in opts:
            pattern = "random" if float(opts["percentage_random"]) >= 50 else "sequential"
        iodepth, numjobs = int(opts.get("iodepth", 1)), int(opts.get("numjobs", 1))
        block_size = fio_size(str(opts["bs"])) if "bs" in opts and "," not in str(opts["bs"]) else None
    except (ValueError, KeyError) as err:
        raise FioResultError(f"{where}: cannot read its job options ({err})") from None
    rows = []
    for direction in ("read", "write"):
        d = job.get(direction)
        if not isinstance(d, dict):
            raise FioResultError(f"{where}: no {direction!r} section")
        try:
            ios = int(d["total_ios"])
            if ios == 0:
                continue
            runtime_s = float(d["runtime"]) / 1e3
            lat, clat = d["lat_ns"], d["clat_ns"]
            bs = block_size or round(float(d["io_bytes"]) / ios)
            values = {"iops": (float(d["iops"]), float(d["iops_stddev"]), int(d["iops_samples"])),
                      "mb_s": (float(d["bw_bytes"]) / 1e6, float(d["bw_dev"]) * 1024 / 1e6, int(d["bw_samples"])),
                      "lat_mean": (float(lat["mean"]) / 1e3, None, None)}  # fmt: skip
            pct = clat.get("percentile", {})
            for metric, key in _PERCENTILES.items():
                if key in pct:
                    values[metric] = (float(pct[key]) / 1e3, None, None)
        except (KeyError, TypeError, ValueError) as err:
            raise FioResultError(f"{where}, {direction}: missing or unreadable key {err}") from None
        for metric, (value, sd, n) in values.items():
            rows.append({
                "row_id": f"{name}/{direction}/{metric}", "job": name, "pattern": pattern, "read_pct": read_pct,
                "block_size": bs, "iodepth": iodepth, "numjobs": numjobs, "outstanding": iodepth * numjobs,
                "direction": direction, "metric": metric, "value": value, "unit": UNITS[metric],
                "stddev": sd, "samples": n, "ios": ios, "runtime_s": runtime_s, "source": source,
            })  # fmt: skip
    if not rows:
        raise FioResultError(f"{where}: completed no IO")
    return rows


def read_fio_json(path: str | Path, *, source: str | None = None) -> pl.DataFrame:
    """The tidy rows (:data:`COLUMNS`) of one fio 3.x JSON result file."""
    path = Path(path)
    if not path.is_file():
        raise FioResultError(f"{path}: fio result file not found")
    text = path.read_text(encoding="utf-8", errors="replace")
    start = text.find("{")  # fio may print notes before the JSON object
    try:
        data = json.loads(text[start:] if start > 0 else text)
    except json.JSONDecodeError as err:
        raise FioResultError(f"{path}: not valid JSON ({err.msg} at line {err.lineno})") from None
    if not isinstance(data, dict):
        raise FioResultError(f"{path}: the JSON is not an object: not a fio result")
    fio_version(data, str(path))
    jobs = data.get("jobs")
    if not isinstance(jobs, list) or not jobs:
        raise FioResultError(f"{path}: no 'jobs' list: nothing was measured")
    options = {k: str(v) for k, v in (data.get("global options") or {}).items()}
    rows = [r for job in jobs for r in _job_rows(job, options, str(path), source or path.name)]
    ids = [r["row_id"] for r in rows]
    if len(set(ids)) < len(ids):
        raise FioResultError(f"{path}: two jobs share a name; give each job its own name")
    return pl.DataFrame(rows, schema=SCHEMA)


def read_fio_results(paths: Iterable[str | Path]) -> pl.DataFrame:
    """The tidy rows of several fio JSON files; a job name that repeats across files is refused."""
    frames = [read_fio_json(p) for p in paths]
    if not frames:
        raise FioResultError("no fio result files given")
    out = pl.concat(frames)
    dup = out.filter(pl.col("row_id").is_duplicated())["job"].unique().to_list()
    if dup:
        raise FioResultError(f"jobs {sorted(dup)} appear in more than one file; rename them")
    return out


def combine_repeats(rows: pl.DataFrame) -> pl.DataFrame:
    """One row per job, direction and metric from the rows of several runs of each job (the same
    ``row_id``): the median value; for IOPS and MB/s, ``stddev`` across the runs and ``samples`` the
    number of runs (so an interval is over runs, not over one run's intervals); ``ios`` and
    ``runtime_s`` summed; ``source`` every run's file, separated by ``;``."""
    rate = pl.col("metric").is_in(["iops", "mb_s"])
    out = rows.group_by("row_id", maintain_order=True).agg(
        *(pl.col(c).first() for c in COLUMNS if c not in ("row_id", "value", "stddev", "samples", "ios", "runtime_s", "source")),
        pl.col("value").median(),
        pl.when(rate.first()).then(pl.col("value").std()).otherwise(None).alias("stddev"),
        pl.when(rate.first()).then(pl.len()).otherwise(None).cast(pl.Int64).alias("samples"),
        pl.col("ios").sum(), pl.col("runtime_s").sum(), pl.col("source").str.join(";"),
    )  # fmt: skip
    return out.select(COLUMNS).cast(SCHEMA)
