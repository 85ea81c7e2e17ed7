"""Running a lab plan: fio jobs inside control groups the lab creates, the device's own counters for each
group, and the provenance, into a dataset folder.

**Cache points** (page cache held to ``memory_limit`` by a memory cgroup): per point a new group; the test
file's cached pages are dropped first (``posix_fadvise(DONTNEED)`` on the lab's own file, so each point
starts cold); then an unmeasured fio run of ``ramp_s`` (the cache fills and reaches its steady state), the
group's IO counters, and the measured run of ``runtime_s``. fio runs buffered (``direct=0``) with
``ioengine=psync`` (one IO at a time: the process waits for each read, as a page-cache read does),
``invalidate=0`` (fio's default ``invalidate=1`` drops the file's cache at each start) and ``norandommap``
(fio's random map with uniform access visits each block once per pass, a scan that no cache serves). The
**hit ratio** is ``1 - device reads / fio reads``: the reads the group sent to the device during the
measured run (blkio ``io_serviced`` / ``io.stat``) against the reads fio completed. fio's default
``fadvise_hint=1`` advises ``POSIX_FADV_RANDOM`` for random jobs, which turns read-ahead off, so one miss is
one device read of one block (``device_read_bytes`` says so: a read-ahead would read more bytes than
blocks missed). On cgroup v1 the kernel counts a group's ``io_serviced`` in blk-throttle, which (Linux
6.x: ``blk_should_throtl``) skips a device no throttle rule was ever set on since boot: every group's count
stays 0 and every point would read as all hits. So each cache group carries a read throttle that never
binds (:data:`ACCOUNTING_IOPS`), which turns the counting on. The group's memory (``mem_*``: the
medians of samples every 0.25 s while the measured run holds it) is recorded. The point ``hit_cost_ws`` is
run first: fully cached, its latency is the **hit cost**, and its memory not taken by the test file's
pages (``usage - (cache - shmem)``: fio's own memory and shared memory, the kernel's memory charged to the
group) is what the process itself uses of the limit.

**Throttle scenarios**: per scenario a throttled group (blk-throttle's limit on the test file's disk) and
``unthrottled`` groups without limit, each running the same fio job (``direct=1``, libaio, random reads)
at once, each with its IOPS logged every ``log_ms`` (fio's ``write_iops_log`` with ``log_avg_msec``).

The folder ``OUT`` holds ``cache.csv``, ``throttle.csv``, ``throttle_series.csv``, every job file and fio's
JSON under ``jobs/``, and ``provenance.json`` (kernel, cgroup version, limits, fio's version, the device,
load average before and after, the plan). Every group is removed at the end and on interruption
(:func:`storagelab.lab.cgroup.lab_cgroups`); the test file, created by the lab, is removed too.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from storagelab.lab import cgroup
from storagelab.lab.plan import CachePoint, LabPlan, Scenario
from storagelab.measured.run import fio_binary, fio_version_text
from storagelab.measured.target import STATE_FILE, Allow, check_target, create_file, describe_path

CACHE = "cache.csv"
THROTTLE = "throttle.csv"
SERIES = "throttle_series.csv"
PROVENANCE = "provenance.json"


#: A read throttle no disk reaches (IOs per second), set on each cache group so that the kernel counts the
#: group's device IOs (module docstring): on a freshly booted machine without it, a first lab run measured
#: a hit ratio of 1.0 at twice the memory limit.
ACCOUNTING_IOPS = 2**31


def loadavg() -> str:
    """``/proc/loadavg`` (1, 5 and 15 minute load averages, runnable/total tasks, last pid)."""
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return ""


def drop_cache(path: Path) -> None:
    """Drop ``path``'s clean pages from the page cache (``POSIX_FADV_DONTNEED``; the lab's own file)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def cache_job(plan: LabPlan, point: CachePoint, filename: str, runtime_s: float) -> str:
    """The fio job file of a cache point (see the module's docstring)."""
    assert plan.cache is not None
    rw = "randread" if point.read_pct == 100 else "randrw"
    lines = [
        "[global]", "ioengine=psync", "direct=0", "invalidate=0", "norandommap", "randrepeat=0",
        f"filename={filename}", f"size={plan.working_set_bytes(point)}", "time_based",
        f"runtime={round(runtime_s * 1e3)}ms", f"bs={plan.cache.block_size}", f"rw={rw}",
        f"random_distribution={point.distribution}", "", f"[{point.name}]",
    ]  # fmt: skip
    if rw == "randrw":
        lines.insert(-2, f"rwmixread={point.read_pct}")
    return "\n".join(lines) + "\n"


def throttle_job(plan: LabPlan, sc: Scenario, tenant: str, filename: str, log_prefix: str) -> str:
    """The fio job file of one tenant of a throttle scenario."""
    assert plan.throttle is not None
    lines = [
        "[global]", "ioengine=libaio", "direct=1", "norandommap", "randrepeat=0", f"filename={filename}",
        f"size={plan.file_size}", "time_based", f"runtime={round(plan.throttle.runtime_s * 1e3)}ms",
        f"bs={sc.block_size}", f"rw={'randread' if sc.read_pct == 100 else 'randwrite'}",
        f"iodepth={sc.iodepth}", f"write_iops_log={log_prefix}", f"log_avg_msec={plan.throttle.log_ms}",
    ]  # fmt: skip
    if sc.burst_ios is not None and tenant == "throttled":
        lines += [f"thinktime={round(sc.idle_s * 1e6)}", f"thinktime_blocks={sc.burst_ios}",
                  f"write_lat_log={log_prefix}"]  # fmt: skip
    lines += ["", f"[{sc.name}-{tenant}]"]
    return "\n".join(lines) + "\n"


def _in_group(procs: list[Path]) -> Callable[[], None]:
    """A child's pre-exec step: write its pid into each ``cgroup.procs`` (it joins the group before fio
    starts, so every page and IO of fio is the group's)."""

    def join() -> None:
        pid = str(os.getpid())
        for p in procs:
            with open(p, "w") as f:
                f.write(pid)

    return join


def run_fio(job_file: Path, out_json: Path, group: cgroup.Cgroup, cwd: Path) -> subprocess.Popen:
    """Start fio on ``job_file`` inside ``group``; JSON to ``out_json``."""
    return subprocess.Popen(
        [fio_binary(), "--output-format=json", f"--output={out_json}", str(job_file)],
        cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        preexec_fn=_in_group(group.procs_files),  # a pre-exec write to cgroup.procs only
    )  # fmt: skip


def _wait(
    proc: subprocess.Popen, what: str, sample: Callable[[], None] | None = None, every_s: float = 0.25
) -> None:
    """Wait for fio; with ``sample``, call it every ``every_s`` while fio runs (the group's memory is read
    while fio holds it: after fio exits its own memory is gone)."""
    try:
        if sample is not None:
            while proc.poll() is None:
                time.sleep(every_s)
                if proc.poll() is None:
                    sample()
        _, err = proc.communicate()
    except BaseException:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        raise
    if proc.returncode != 0:
        raise RuntimeError(f"fio failed on {what}: {(err or '').strip()[-800:]}")


def _fio_totals(path: Path) -> dict[str, Any]:
    text = path.read_text()
    data = json.loads(text[text.find("{") :])
    job = data["jobs"][0]
    out: dict[str, Any] = {}
    for d in ("read", "write"):
        s = job[d]
        out[f"fio_{d}_ios"] = int(s["total_ios"])
        out[f"iops_{d}"] = float(s["iops"])
        out[f"mb_s_{d}"] = float(s["bw_bytes"]) / 1e6
        out[f"lat_mean_{d}_us"] = float(s["lat_ns"]["mean"]) / 1e3 if s["total_ios"] else float("nan")
        pct = s.get("clat_ns", {}).get("percentile", {})
        out[f"clat_p99_{d}_us"] = float(pct.get("99.000000", "nan")) / 1e3 if s["total_ios"] else float("nan")
        out[f"runtime_{d}_s"] = float(s["runtime"]) / 1e3
    return out


def _cache_point(plan: LabPlan, point: CachePoint, target: Path, out: Path, groups: list, device: str,
                 role: str) -> dict[str, Any]:  # fmt: skip
    assert plan.cache is not None
    jobs = out / "jobs"
    limits = cgroup.Limits(memory_bytes=plan.memory_limit, device=device, read_iops=ACCOUNTING_IOPS)
    group = cgroup.create(limits, label="cache")
    groups.append(group)
    drop_cache(target)
    warm, meas = jobs / f"{point.name}.warm.fio", jobs / f"{point.name}.fio"
    warm.write_text(cache_job(plan, point, str(target), plan.cache.ramp_s))
    meas.write_text(cache_job(plan, point, str(target), plan.cache.runtime_s))
    _wait(run_fio(warm, jobs / f"{point.name}.warm.json", group, jobs), point.name + " (warm-up)")
    before = group.io_counts(device)
    samples: list[dict[str, int]] = []
    _wait(
        run_fio(meas, jobs / f"{point.name}.json", group, jobs),
        point.name,
        lambda: samples.append(group.memory_stat()),
    )
    after = group.io_counts(device)
    mem = (
        {k: int(statistics.median(s[k] for s in samples)) for k in samples[0]}
        if samples
        else group.memory_stat()
    )
    group.remove()  # (the counters and the memory are read before)
    groups.remove(group)
    row: dict[str, Any] = {
        "point": point.name, "role": role, "distribution": point.distribution, "working_set": point.working_set,
        "ws_bytes": plan.working_set_bytes(point), "read_pct": point.read_pct, "memory_limit": plan.memory_limit,
        "block_size": plan.cache.block_size,
    }  # fmt: skip
    row |= _fio_totals(jobs / f"{point.name}.json")
    for k in after:
        row[f"device_{k}"] = after[k] - before[k]
    reads = row["fio_read_ios"]
    row["hit_ratio"] = 1 - row["device_read_ios"] / reads if reads else float("nan")
    row["hit_ratio_bytes"] = (
        1 - row["device_read_bytes"] / (reads * plan.cache.block_size) if reads else float("nan")
    )
    row |= {f"mem_{k}": v for k, v in mem.items()}
    row["source"] = f"jobs/{point.name}.json"
    return row


def _scenario(plan: LabPlan, sc: Scenario, target: Path, out: Path, groups: list, device: str
              ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:  # fmt: skip
    jobs = out / "jobs"
    tenants = ["throttled"] + [f"free{i + 1}" for i in range(sc.unthrottled)]
    procs, made = {}, {}
    for t in tenants:
        lim = sc.throttle.model_dump() if t == "throttled" else {}
        g = cgroup.create(cgroup.Limits(device=device, **lim), label="io")
        groups.append(g)
        made[t] = g
    before = {t: g.io_counts(device) for t, g in made.items()}
    for t in tenants:
        stem = f"{sc.name}-{t}"
        jf = jobs / f"{stem}.fio"
        jf.write_text(throttle_job(plan, sc, t, str(target), stem))
        procs[t] = run_fio(jf, jobs / f"{stem}.json", made[t], jobs)
    for t, p in procs.items():
        _wait(p, f"{sc.name} tenant {t}")
    rows, series = [], []
    for t in tenants:
        g = made[t]
        after = g.io_counts(device)
        g.remove()
        groups.remove(g)
        stem = f"{sc.name}-{t}"
        tot = _fio_totals(jobs / f"{stem}.json")
        d = "read" if sc.read_pct == 100 else "write"
        rows.append({
            "scenario": sc.name, "tenant": t, "throttled": t == "throttled", "tenants": len(tenants),
            "block_size": sc.block_size, "iodepth": sc.iodepth, "burst_ios": sc.burst_ios, "idle_s": sc.idle_s,
            **{f"limit_{k}": v for k, v in sc.throttle.model_dump().items()},
            "ios": tot[f"fio_{d}_ios"], "iops": tot[f"iops_{d}"], "mb_s": tot[f"mb_s_{d}"],
            "lat_mean_us": tot[f"lat_mean_{d}_us"], "clat_p99_us": tot[f"clat_p99_{d}_us"],
            "runtime_s": tot[f"runtime_{d}_s"], "device_ios": after[f"{d}_ios"] - before[t][f"{d}_ios"],
            "source": f"jobs/{stem}.json",
        })  # fmt: skip
        for log in sorted(jobs.glob(f"{stem}_iops.*.log")):
            for line in log.read_text().splitlines():
                parts = [x.strip() for x in line.split(",")]
                if len(parts) >= 2:
                    series.append({"scenario": sc.name, "tenant": t, "t_s": int(parts[0]) / 1e3,
                                   "iops": float(parts[1]), "kind": "iops"})  # fmt: skip
        for log in sorted(jobs.glob(f"{stem}_lat.*.log")):  # per IO (burst scenarios): completion time
            for line in log.read_text().splitlines():
                parts = [x.strip() for x in line.split(",")]
                if len(parts) >= 2:
                    series.append({"scenario": sc.name, "tenant": t, "t_s": int(parts[0]) / 1e3,
                                   "iops": float(parts[1]) / 1e3, "kind": "lat_us"})  # fmt: skip
    return rows, series


def provenance(plan: LabPlan, target: Path, version: int, device: str, started: str, load: list[str]) -> dict:
    """Kernel, cgroup version, limits, fio's version, the device, load averages, the plan."""
    return {
        "tool": "storagelab lab",
        "fio_version": fio_version_text(),
        "kernel": f"{platform.system()} {platform.release()} {platform.version()}",
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "cgroup_version": version,
        "memory_limit_bytes": plan.memory_limit,
        "throttled_device": device,
        "device": describe_path(target),
        "target": str(target),
        "started_utc": started,
        "finished_utc": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "loadavg_before": load[0],
        "loadavg_after": load[-1],
        "plan": plan.model_dump(mode="json"),
    }


def run_lab(plan: LabPlan, target: str | Path, out: str | Path, *, progress: Callable[[str], None] | None = None,
            keep_file: bool = False) -> dict[str, pl.DataFrame]:  # fmt: skip
    """Run ``plan`` on a test file ``target`` the lab creates (never an existing file nor a device: the
    ``measure`` rules, :func:`~storagelab.measured.target.check_target` without any risk accepted) into
    folder ``out``; see the module's docstring. Returns the tables written."""
    target, out = Path(target).absolute(), Path(out).absolute()  # fio runs in jobs/: absolute paths
    fio_binary()
    version = cgroup.require(need_memory=plan.cache is not None)
    kind = check_target(target, plan.file_size, out, Allow())
    out.mkdir(parents=True, exist_ok=True)
    (out / "jobs").mkdir(exist_ok=True)
    say = progress or (lambda _m: None)
    load = [loadavg()]
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    if kind == "new file":
        say(f"creating the test file {target} ({plan.file_size / 2**20:.0f} MiB)")
        create_file(target, plan.file_size, out)
    device = cgroup.device_of(target)
    tables: dict[str, pl.DataFrame] = {}
    try:
        with cgroup.lab_cgroups() as groups:
            if plan.cache is not None:
                rows = []
                hit = CachePoint(distribution="random", working_set=plan.cache.hit_cost_ws)
                todo = [(hit, "hit_cost")] + [(p, "point") for p in plan.cache.planned()]
                for i, (point, role) in enumerate(todo):
                    say(f"cache {i + 1}/{len(todo)}: {point.name}")
                    rows.append(_cache_point(plan, point, target, out, groups, device, role))
                tables[CACHE] = pl.DataFrame(rows)
                tables[CACHE].write_csv(out / CACHE)
            if plan.throttle is not None:
                rows, series = [], []
                for i, sc in enumerate(plan.throttle.scenarios):
                    say(f"throttle {i + 1}/{len(plan.throttle.scenarios)}: {sc.name}")
                    r, s = _scenario(plan, sc, target, out, groups, device)
                    rows += r
                    series += s
                    time.sleep(0.5)  # the device settles between scenarios
                tables[THROTTLE] = pl.DataFrame(rows)
                tables[THROTTLE].write_csv(out / THROTTLE)
                tables[SERIES] = pl.DataFrame(series, schema={"scenario": pl.String, "tenant": pl.String,
                                                              "t_s": pl.Float64, "iops": pl.Float64,
                                                              "kind": pl.String})  # fmt: skip
                tables[SERIES].write_csv(out / SERIES)
        load.append(loadavg())
        prov = provenance(plan, target, version, device, started, load)
        (out / PROVENANCE).write_text(json.dumps(prov, indent=1) + "\n")
    finally:
        if not keep_file and target.exists() and (out / STATE_FILE).exists():
            target.unlink()
            (out / STATE_FILE).unlink(missing_ok=True)
    return tables


def load_lab(folder: str | Path) -> dict[str, Any]:
    """A lab dataset folder: ``cache``, ``throttle``, ``series`` (DataFrames, None where absent) and
    ``provenance``."""
    folder = Path(folder)
    read = lambda name: pl.read_csv(folder / name) if (folder / name).is_file() else None  # noqa: E731
    prov = folder / PROVENANCE
    return {"cache": read(CACHE), "throttle": read(THROTTLE), "series": read(SERIES),
            "provenance": json.loads(prov.read_text()) if prov.is_file() else {}}  # fmt: skip


__all__ = ["cache_job", "load_lab", "run_lab", "throttle_job"]
