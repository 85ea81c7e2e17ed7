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
import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import polars as pl

from storagelab.input_files import InputFileError
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


class FioResultError(InputFileError):
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


#: The largest count or byte total read from a result (fio's own fields are 64-bit).
_MAX_INT = 2**63 - 1


def _value(section: Any, key: str, where: str, *, whole: bool = False) -> float:
    """``section[key]`` as a finite number >= 0 (a whole one with ``whole``), or a
    :class:`FioResultError` naming ``where``, the key and what is allowed."""
    if not isinstance(section, dict) or key not in section:
        raise FioResultError(f"{where}: missing or unreadable key {key!r}")
    given = section[key]
    try:
        value = float(given) if not isinstance(given, bool) else math.nan
    except (TypeError, ValueError, OverflowError):
        value = math.nan
    if whole and math.isfinite(value) and value != int(value):
        value = math.nan
    if not (math.isfinite(value) and 0 <= value <= _MAX_INT):
        kind = "a whole number" if whole else "a finite number"
        raise FioResultError(f"{where}: key {key!r} is {given!r}; expected {kind} >= 0")
    return value


def _option(opts: dict[str, Any], key: str, where: str, default: str, least: float = 0,
            most: float = _MAX_INT) -> float:  # fmt: skip
    """A numeric job option (``default`` when absent) in ``[least, most]``, or a :class:`FioResultError`
    naming the option."""
    given = opts.get(key, default)
    try:
        value = float(str(given))
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and least <= value <= most):
        raise FioResultError(
            f"{where}: job option {key}={given!r}; expected a number in [{least:g}, {most:g}]"
        )
    return value


def _job_rows(job: Any, options: dict[str, str], where: str, source: str) -> list[dict]:
    if not isinstance(job, dict):
        raise FioResultError(f"{where}: key 'jobs': each job is an object, got {job!r:.60}")
    name = job.get("jobname")
    if not isinstance(name, str):
        raise FioResultError(f"{where}: key 'jobs': a job without 'jobname'")
    where = f"{where}, job {name!r}"
    if job.get("error", 0):
        raise FioResultError(
            f"{where}: fio reports error {job['error']!r} for this job (key 'error'); its numbers are not valid"
        )
    own = job.get("job options") or {}
    if not isinstance(own, dict):
        raise FioResultError(f"{where}: key 'job options' must be an object of option -> value")
    opts = {**options, **{str(k): str(v) for k, v in own.items()}}
    rw = str(opts.get("rw", opts.get("readwrite", "read")))
    if rw not in _RW:
        raise FioResultError(f"{where}: rw={rw!r} is not supported; supported: {', '.join(_RW)}")
    read_pct, pattern = _RW[rw]
    if read_pct is None:
        read_pct = (
            int(_option(opts, "rwmixread", where, "50", most=100)) if "rwmixread" in opts
            else 100 - int(_option(opts, "rwmixwrite", where, "50", most=100)) if "rwmixwrite" in opts
            else 50
        )  # fmt: skip
    if "percentage_random" in opts:
        pct = _option(opts, "percentage_random", where, "100", most=100)
        pattern = "random" if pct >= 50 else "sequential"
    iodepth = int(_option(opts, "iodepth", where, "1", least=1, most=2**31))
    numjobs = int(_option(opts, "numjobs", where, "1", least=1, most=2**31))
    block_size = None
    if "bs" in opts and "," not in opts["bs"]:
        try:
            block_size = fio_size(opts["bs"])
        except ValueError as err:
            raise FioResultError(f"{where}: job option bs: {err}") from None
    rows = []
    for direction in ("read", "write"):
        d = job.get(direction)
        if not isinstance(d, dict):
            raise FioResultError(f"{where}: no {direction!r} section")
        at = f"{where}, {direction}"
        ios = int(_value(d, "total_ios", at, whole=True))
        if ios == 0:
            continue
        runtime_s = _value(d, "runtime", at) / 1e3
        bs = block_size or round(_value(d, "io_bytes", at) / ios)
        lat, clat = d.get("lat_ns"), d.get("clat_ns")
        values = {
            "iops": (_value(d, "iops", at), _value(d, "iops_stddev", at),
                     int(_value(d, "iops_samples", at, whole=True))),
            "mb_s": (_value(d, "bw_bytes", at) / 1e6, _value(d, "bw_dev", at) * 1024 / 1e6,
                     int(_value(d, "bw_samples", at, whole=True))),
            "lat_mean": (_value(lat, "mean", f"{at}, lat_ns") / 1e3, None, None),
        }  # fmt: skip
        if not isinstance(clat, dict):
            raise FioResultError(f"{at}: missing key 'clat_ns' (an object)")
        pct = clat.get("percentile", {})
        if not isinstance(pct, dict):
            raise FioResultError(f"{at}, clat_ns: key 'percentile' must be an object of percent -> ns")
        for metric, key in _PERCENTILES.items():
            if key in pct:
                values[metric] = (_value(pct, key, f"{at}, clat_ns.percentile") / 1e3, None, None)
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
    except (ValueError, RecursionError) as err:  # an integer of thousands of digits; nesting too deep
        raise FioResultError(f"{path}: not a fio JSON result ({type(err).__name__}: {err})") from None
    if not isinstance(data, dict):
        raise FioResultError(f"{path}: the JSON is not an object: not a fio result")
    fio_version(data, str(path))
    jobs = data.get("jobs")
    if not isinstance(jobs, list) or not jobs:
        raise FioResultError(f"{path}: no 'jobs' list: nothing was measured")
    given = data.get("global options") or {}
    if not isinstance(given, dict):
        raise FioResultError(f"{path}: key 'global options' must be an object of option -> value")
    options = {str(k): str(v) for k, v in given.items()}
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
