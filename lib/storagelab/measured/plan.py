"""A measurement plan: the fio jobs ``storagelab measure`` runs against one target, each a closed loop at a
queue depth with a read share, a block size and a pattern, short and with a ramp.

A plan file (YAML)::

    name: my-array
    size: 1GiB            # the test file (or region of a device): large enough to defeat small caches
    runtime_s: 3          # measured seconds per job, after ramp_s seconds that are not measured
    ramp_s: 1
    repeats: 1            # passes of the whole plan, interleaved; the dataset holds each job's median
    grids:                # each grid is the cartesian product of its list-valued keys
      - {pattern: random, read_pct: [100, 70, 30, 0], block_size: 4K, iodepth: [1, 2, 4, 8, 16, 32, 64]}
      - {pattern: sequential, read_pct: [100, 0], block_size: 1M, iodepth: [1, 32]}
    jobs:                 # and/or single jobs
      - {pattern: random, read_pct: 100, block_size: 64K, iodepth: 1}

:data:`DEFAULT_PLAN` is the four corners (4 KiB random and 1 MiB sequential, read and write, saturated),
4 KiB random at queue depths 1 to 64 with read shares 100/70/30/0 %, and random reads and writes of
16 KiB to 1 MiB at QD1 and saturated, and a 70 % read mix at 64 KiB and 1 MiB: 50 jobs of 2 s after a
0.5 s ramp, the plan run three times interleaved (the dataset holds each job's median: a shared machine's
noise from one run to the next is larger than the tolerances), about 6.5 minutes.
:data:`QUICK_PLAN` is a tiny plan for tests (a 16 MiB file, 10 jobs of 0.5 s after a 0.25 s ramp).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from storagelab.input_files import InputFileError, problems, read_yaml
from storagelab.workloads.access_spec import parse_size


class PlanError(InputFileError):
    """A plan the workbench cannot run; the message names the file and the key."""


class PlannedJob(BaseModel):
    """One fio job: ``pattern`` (random or sequential offsets), ``read_pct`` (0..100), ``block_size``
    (bytes) and ``iodepth`` (IOs in flight, one worker)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pattern: Literal["random", "sequential"] = "random"
    read_pct: int = Field(ge=0, le=100)
    block_size: int
    iodepth: int = Field(ge=1, le=1024)

    @field_validator("block_size", mode="before")
    @classmethod
    def _size(cls, v: Any) -> int:
        return parse_size(v)

    @property
    def name(self) -> str:
        """A name saying what the job is: ``rand-r70-4k-qd8``."""
        bs = self.block_size
        size = f"{bs // 2**20}m" if bs % 2**20 == 0 else f"{bs // 1024}k" if bs % 1024 == 0 else f"{bs}b"
        return f"{'rand' if self.pattern == 'random' else 'seq'}-r{self.read_pct}-{size}-qd{self.iodepth}"

    def rw(self) -> str:
        """fio's ``rw`` for this job."""
        if self.read_pct == 100:
            return "randread" if self.pattern == "random" else "read"
        if self.read_pct == 0:
            return "randwrite" if self.pattern == "random" else "write"
        return "randrw" if self.pattern == "random" else "rw"


class Plan(BaseModel):
    """A measurement plan: its jobs (from ``grids`` and ``jobs``), the test ``size`` (bytes), the
    measured ``runtime_s`` and unmeasured ``ramp_s`` of each job, and ``repeats``: how many times the
    plan runs, its passes interleaved (job 1 to n, then again), so that each job is measured at
    several times; the dataset then holds each job's median over its runs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    size: int
    runtime_s: float = Field(gt=0, le=600)
    ramp_s: float = Field(ge=0, le=600)
    repeats: int = Field(default=1, ge=1, le=20)
    ioengine: str = "libaio"
    grids: tuple[dict[str, Any], ...] = ()
    jobs: tuple[PlannedJob, ...] = ()

    @field_validator("size", mode="before")
    @classmethod
    def _size(cls, v: Any) -> int:
        return parse_size(v)

    def planned(self) -> list[PlannedJob]:
        """Every job of the plan, grids expanded, in order, without duplicates."""
        out: dict[str, PlannedJob] = {}
        for i, grid in enumerate(self.grids):
            keys = list(grid)
            values = [v if isinstance(v, list | tuple) else [v] for v in grid.values()]
            for combo in itertools.product(*values):
                try:
                    job = PlannedJob(**dict(zip(keys, combo, strict=True)))
                except ValidationError as err:
                    p = problems(err)[0]
                    raise PlanError(f"plan {self.name!r}, grids.{i}.{p.key}: {p.message}{p.given}") from None
                out.setdefault(job.name, job)
        for job in self.jobs:
            out.setdefault(job.name, job)
        if not out:
            raise PlanError(f"plan {self.name!r} has no jobs: give grids or jobs")
        for job in out.values():
            if job.block_size > self.size:
                raise PlanError(f"plan {self.name!r}: job {job.name} has a block size above the size")
        return list(out.values())

    def job_file(self, job: PlannedJob, filename: str, *, direct: bool = True) -> str:
        """The fio job file for ``job`` on ``filename`` (one job section; ``norandommap`` as in
        :func:`storagelab.workloads.fio.to_fio`, so random offsets are drawn independently)."""
        lines = [
            "[global]", f"ioengine={self.ioengine}", f"direct={int(direct)}", f"filename={filename}",
            f"size={self.size}", "time_based", f"runtime={round(self.runtime_s * 1e3)}ms",
            f"ramp_time={round(self.ramp_s * 1e3)}ms", "norandommap", "randrepeat=0", "group_reporting",
            "", f"[{job.name}]", f"rw={job.rw()}", f"bs={job.block_size}", f"iodepth={job.iodepth}",
        ]  # fmt: skip
        if 0 < job.read_pct < 100:
            lines.append(f"rwmixread={job.read_pct}")
        return "\n".join(lines) + "\n"


def load_plan(path: str | Path) -> Plan:
    """A plan from its YAML file; a bad key is named with the file and what is allowed."""
    data = read_yaml(path, PlanError, "plan file not found")
    if not isinstance(data, dict):
        raise PlanError(f"{path}: a plan is a mapping (name, size, runtime_s, ramp_s, grids, jobs)")
    data.setdefault("name", Path(path).stem)
    try:
        plan = Plan(**data)
    except ValidationError as err:
        lines = [f"  {p.key}: {p.message}{p.given}" for p in problems(err)]
        raise PlanError(f"{path}: not a valid plan\n" + "\n".join(lines)) from None
    try:
        plan.planned()
    except PlanError as err:
        raise PlanError(f"{path}: {err}") from None
    return plan


_SIZES = ["16K", "64K", "256K", "1M"]

#: The default plan (see the module's docstring).
DEFAULT_PLAN = Plan(
    name="default",
    size=2**30,
    runtime_s=2.0,
    ramp_s=0.5,
    repeats=3,
    grids=(
        {"pattern": "random", "read_pct": [100, 70, 30, 0], "block_size": "4K",
         "iodepth": [1, 2, 4, 8, 16, 32, 64]},
        {"pattern": "random", "read_pct": [100, 0], "block_size": _SIZES, "iodepth": [1, 32]},
        {"pattern": "random", "read_pct": [70], "block_size": ["64K", "1M"], "iodepth": [1, 8]},
        {"pattern": "sequential", "read_pct": [100, 0], "block_size": "1M", "iodepth": [32]},
    ),
)  # fmt: skip

#: A tiny plan for tests: a 16 MiB file, 4 KiB random read and write at QD1 and 16, 64 KiB at QD1 and 8,
#: one mixed job.
QUICK_PLAN = Plan(
    name="quick",
    size=16 * 2**20,
    runtime_s=0.5,
    ramp_s=0.25,
    grids=(
        {"pattern": "random", "read_pct": [100, 0], "block_size": "4K", "iodepth": [1, 16]},
        {"pattern": "random", "read_pct": [100, 0], "block_size": "64K", "iodepth": [1, 8]},
        {"pattern": "random", "read_pct": [70], "block_size": "4K", "iodepth": [2, 4]},
    ),
)


def plan_named(name_or_path: str | Path | None, *, quick: bool = False) -> Plan:
    """The plan a command names: a YAML file, or ``None`` for :data:`DEFAULT_PLAN` (:data:`QUICK_PLAN`
    with ``quick``)."""
    if name_or_path is None:
        return QUICK_PLAN if quick else DEFAULT_PLAN
    return load_plan(name_or_path)
