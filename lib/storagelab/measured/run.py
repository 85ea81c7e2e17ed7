"""Running a measurement plan with fio, resumably, into a dataset folder with its provenance.

The folder (``OUT``) holds, per job, the fio job file (``jobs/<job>.fio``) and fio's JSON output
(``json/<job>.json``, written under another name and renamed when fio has finished, so a file there is a
complete result); the tidy dataset of every job (``measurements.csv``, :mod:`storagelab.measured.results`);
and ``provenance.json``: the fio version, the kernel, the device behind the target (from ``/sys``), its
file system, the plan, and when it was measured. A plan stopped at any point resumes where it stopped:
jobs whose JSON is complete are not run again.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from storagelab.measured.plan import Plan
from storagelab.measured.results import FioResultError, combine_repeats, read_fio_json
from storagelab.measured.target import STATE_FILE, Allow, check_target, create_file, describe_path

MEASUREMENTS = "measurements.csv"
PROVENANCE = "provenance.json"


class FioNotFound(RuntimeError):
    """No fio on the PATH."""


def fio_binary() -> str:
    """The fio executable, or :class:`FioNotFound` saying how to install it."""
    path = shutil.which("fio")
    if path is None:
        raise FioNotFound("fio is not installed (Debian/Ubuntu: apt-get install fio); it runs the plan")
    return path


def fio_version_text() -> str:
    """``fio --version`` (e.g. ``fio-3.33``)."""
    return subprocess.run(
        [fio_binary(), "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()


@dataclass
class Measurement:
    """A measured plan: its ``folder``, the tidy ``rows`` (:data:`~storagelab.measured.results.COLUMNS`),
    the ``provenance`` and how many jobs were ``run`` and ``skipped`` (already complete)."""

    folder: Path
    rows: pl.DataFrame
    provenance: dict[str, Any]
    run: int = 0
    skipped: int = 0


def complete_json(path: Path) -> bool:
    """Whether ``path`` is a complete fio result (it parses and every job has its numbers)."""
    try:
        read_fio_json(path)
    except FioResultError:
        return False
    return True


def measure(
    target: str | Path,
    plan: Plan,
    out: str | Path,
    *,
    allow: Allow | None = None,
    keep_file: bool = False,
    progress: bool = True,
    on_job: Callable[[str, str], None] | None = None,
) -> Measurement:
    """Run ``plan`` against ``target`` with fio into folder ``out``; see the module's docstring. The
    target is checked first (:func:`storagelab.measured.target.check_target`); a file the command
    creates is removed at the end unless ``keep_file``. ``on_job(name, "run"|"skipped")`` is called per
    job."""
    from tqdm.auto import tqdm

    target, out = Path(target), Path(out)
    fio = fio_binary()
    jobs = plan.planned()
    kind = check_target(target, plan.size, out, allow or Allow())
    out.mkdir(parents=True, exist_ok=True)
    (out / "jobs").mkdir(exist_ok=True)
    (out / "json").mkdir(exist_ok=True)
    runs = [(j, k) for k in range(plan.repeats) for j in jobs]  # repeats interleaved: each at another time
    name = lambda j, k: f"{j.name}.json" if plan.repeats == 1 else f"{j.name}.r{k + 1}.json"  # noqa: E731
    todo = [(j, k) for j, k in runs if not complete_json(out / "json" / name(j, k))]
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    if todo and kind == "new file":
        with tqdm(
            total=plan.size, unit="B", unit_scale=True, desc="creating test file", disable=not progress
        ) as bar:
            create_file(target, plan.size, out, bar.update)
        kind = "file created by storagelab"
    run = 0
    with tqdm(total=len(runs), desc=f"fio plan {plan.name}", unit="job", disable=not progress) as bar:
        bar.update(len(runs) - len(todo))
        for job, k in runs:
            final = out / "json" / name(job, k)
            job_file = out / "jobs" / f"{job.name}.fio"
            if (job, k) not in todo:
                if on_job:
                    on_job(final.stem, "skipped")
                continue
            job_file.write_text(plan.job_file(job, str(target.resolve())))
            partial = final.with_suffix(".json.part")
            done = subprocess.run(
                [fio, "--output-format=json", f"--output={partial}", str(job_file)],
                capture_output=True,
                text=True,
            )
            if done.returncode != 0:
                raise RuntimeError(f"fio failed on job {job.name} ({job_file}): {done.stderr.strip()[-800:]}")
            read_fio_json(partial, source=f"json/{final.name}")  # refuse a result the dataset could not use
            os.replace(partial, final)
            run += 1
            bar.update(1)
            if on_job:
                on_job(final.stem, "run")
    frames = [read_fio_json(out / "json" / name(j, k), source=f"json/{name(j, k)}") for j, k in runs]
    rows = combine_repeats(pl.concat(frames)) if plan.repeats > 1 else pl.concat(frames)
    rows.write_csv(out / MEASUREMENTS)
    provenance = _provenance(target, kind, plan, started, out)
    (out / PROVENANCE).write_text(json.dumps(provenance, indent=1) + "\n")
    if kind == "file created by storagelab" and not keep_file and target.exists():
        target.unlink()
        (out / STATE_FILE).unlink(missing_ok=True)
    return Measurement(out, rows, provenance, run=run, skipped=len(runs) - len(todo))


def _provenance(target: Path, kind: str, plan: Plan, started: str, out: Path) -> dict[str, Any]:
    previous = {}
    if (out / PROVENANCE).is_file():
        try:
            previous = json.loads((out / PROVENANCE).read_text())
        except ValueError:
            previous = {}
    uname = platform.uname()
    return {
        "tool": "storagelab measure",
        "fio_version": fio_version_text(),
        "kernel": f"{uname.system} {uname.release}",
        "machine": uname.machine,
        "cpus": os.cpu_count(),
        "target": str(target.resolve()),
        "target_kind": kind,
        "device": describe_path(target if target.exists() else target.resolve().parent),
        "started_utc": previous.get("started_utc", started),
        "finished_utc": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "plan": plan.model_dump(mode="json"),
        "job_files": sorted(f"jobs/{p.name}" for p in (out / "jobs").glob("*.fio")),
        "results": sorted(f"json/{p.name}" for p in (out / "json").glob("*.json")),
        "dataset": MEASUREMENTS,
    }


def import_results(paths: list[str | Path], out: str | Path | None = None) -> pl.DataFrame:
    """Existing fio JSON results as tidy rows (refused file by file with what is wrong); with ``out``,
    written as a dataset folder (``measurements.csv``, the JSON copied under ``json/``, provenance)."""
    from storagelab.measured.results import fio_version, read_fio_results

    rows = read_fio_results(paths)
    if out is not None:
        out = Path(out)
        (out / "json").mkdir(parents=True, exist_ok=True)
        versions = set()
        for p in paths:
            shutil.copyfile(p, out / "json" / Path(p).name)
            text = Path(p).read_text(encoding="utf-8", errors="replace")
            versions.add(fio_version(json.loads(text[text.find("{") :]), str(p)))
        rows = rows.with_columns(source=pl.lit("json/") + pl.col("source"))
        rows.write_csv(out / MEASUREMENTS)
        provenance = {
            "tool": "storagelab import fio",
            "fio_version": ", ".join(sorted(versions)),
            "imported_utc": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "results": sorted(f"json/{Path(p).name}" for p in paths),
            "dataset": MEASUREMENTS,
            "note": "imported results: the device, kernel and file system are not known to storagelab",
        }
        (out / PROVENANCE).write_text(json.dumps(provenance, indent=1) + "\n")
    return rows


def load_measurements(folder: str | Path) -> pl.DataFrame:
    """The tidy dataset of a measurement folder (``measurements.csv``)."""
    from storagelab.measured.results import SCHEMA

    path = Path(folder) / MEASUREMENTS
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no measurements here (storagelab measure or import fio writes it)")
    return pl.read_csv(path, schema=SCHEMA)
