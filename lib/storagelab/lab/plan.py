"""A lab plan: the operating points ``storagelab lab`` runs, committed before they are run (the blind
protocol of notebook 20).

A plan file (YAML)::

    name: lab-vda
    file_size: 512MiB        # the test file the lab creates (never an existing file, never a device)
    memory_limit: 128MiB     # the memory cgroup's limit: the page cache the fio job may hold
    cache:                   # page-cache points: fio buffered IO in a memory cgroup
      block_size: 4K
      ramp_s: 4              # an unmeasured fio run first (the cache warms), then the measured one
      runtime_s: 4
      hit_cost_ws: 0.25      # a fully cached point, run first: the hit cost and the process's own memory
      grids:                 # working_set: multiples of memory_limit; distribution: fio's random_distribution
        - {distribution: [random, zipf:0.8, zipf:1.2, pareto:0.9], working_set: [0.5, 1, 2, 4], read_pct: 100}
    throttle:                # blk-throttle points: fio direct IO, one group throttled, others not
      runtime_s: 6
      scenarios:
        - {name: iops500-beside-1, throttle: {read_iops: 500}, unthrottled: 1, block_size: 4K, iodepth: 16}
        - {name: burst, throttle: {read_iops: 500}, unthrottled: 0, iodepth: 1, burst_ios: 100, idle_s: 1}

:data:`QUICK_PLAN` is the CI's: a 64 MiB file, a 32 MiB limit, three cache points and two throttle
scenarios of about 2 s each, under a minute of fio in all.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from storagelab.input_files import InputFileError, problems, read_yaml
from storagelab.workloads.access_spec import parse_size


class LabPlanError(InputFileError):
    """A lab plan the workbench cannot run; the message names the file and the key."""


_DIST = re.compile(r"^(random|zipf:[0-9.]+|pareto:[0-9.]+)$")


def _size(v: Any) -> int:
    return parse_size(v)


class CachePoint(BaseModel):
    """One page-cache point: fio's ``distribution`` (``random`` = uniform, ``zipf:theta``,
    ``pareto:h``), the ``working_set`` as a multiple of the memory limit, the ``read_pct``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    distribution: str = "random"
    working_set: float = Field(gt=0, le=64)
    read_pct: int = Field(default=100, ge=0, le=100)

    @field_validator("distribution")
    @classmethod
    def _dist(cls, v: str) -> str:
        if not _DIST.match(v):
            raise ValueError("distribution is random, zipf:THETA or pareto:H (fio's random_distribution)")
        if v.startswith("zipf:") and (float(v[5:]) <= 0 or float(v[5:]) == 1):
            raise ValueError("zipf's theta is > 0 and not 1 (fio refuses 1)")
        if v.startswith("pareto:") and not 0 < float(v[7:]) < 1:
            raise ValueError("pareto's h is in (0, 1)")
        return v

    @property
    def name(self) -> str:
        """``cache-zipf1.2-ws2-r100``."""
        d = self.distribution.replace(":", "")
        return f"cache-{d}-ws{self.working_set:g}-r{self.read_pct}"


class CachePlan(BaseModel):
    """The page-cache experiment: ``block_size`` (bytes), ``ramp_s`` and ``runtime_s`` per point,
    ``hit_cost_ws`` (the fully cached point's working set, a multiple of the limit), ``grids`` and
    ``points``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    block_size: int = 4096
    ramp_s: float = Field(default=4.0, ge=0.5, le=120)
    runtime_s: float = Field(default=4.0, gt=0, le=120)
    hit_cost_ws: float = Field(default=0.25, gt=0, le=0.5)
    grids: tuple[dict[str, Any], ...] = ()
    points: tuple[CachePoint, ...] = ()

    _bs = field_validator("block_size", mode="before")(lambda cls, v: _size(v))

    def planned(self) -> list[CachePoint]:
        """Every point, grids expanded, in order, without duplicates."""
        out: dict[str, CachePoint] = {}
        for i, grid in enumerate(self.grids):
            keys = list(grid)
            values = [v if isinstance(v, list | tuple) else [v] for v in grid.values()]
            for combo in itertools.product(*values):
                try:
                    p = CachePoint(**dict(zip(keys, combo, strict=True)))
                except ValidationError as err:
                    pr = problems(err)[0]
                    raise LabPlanError(f"cache.grids.{i}.{pr.key}: {pr.message}{pr.given}") from None
                out.setdefault(p.name, p)
        for p in self.points:
            out.setdefault(p.name, p)
        return list(out.values())


class Throttle(BaseModel):
    """A blk-throttle limit: any of ``read_iops``, ``write_iops`` (IOs/s), ``read_bps``, ``write_bps``
    (bytes/s)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    read_iops: int | None = Field(default=None, ge=1)
    write_iops: int | None = Field(default=None, ge=1)
    read_bps: int | None = None
    write_bps: int | None = None

    @field_validator("read_bps", "write_bps", mode="before")
    @classmethod
    def _bps(cls, v: Any) -> int | None:
        return None if v is None else _size(v)


class Scenario(BaseModel):
    """One throttle scenario: a tenant (its own group) under ``throttle`` running random reads of
    ``block_size`` at ``iodepth``, beside ``unthrottled`` tenants (own groups, no limit) running the same
    job; with ``burst_ios`` the throttled tenant issues that many IOs back to back, then idles ``idle_s``
    (fio's ``thinktime``), to show the burst after idle."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    throttle: Throttle
    unthrottled: int = Field(default=1, ge=0, le=4)
    block_size: int = 4096
    iodepth: int = Field(default=16, ge=1, le=256)
    read_pct: Literal[100, 0] = 100
    burst_ios: int | None = Field(default=None, ge=1)
    idle_s: float = Field(default=0.0, ge=0, le=10)

    _bs = field_validator("block_size", mode="before")(lambda cls, v: _size(v))

    @model_validator(mode="after")
    def _burst(self) -> Scenario:
        if (self.burst_ios is None) != (self.idle_s == 0):
            raise ValueError("burst_ios and idle_s go together (a burst, then the idle time)")
        return self


class ThrottlePlan(BaseModel):
    """The throttle experiment: ``runtime_s`` per scenario (every tenant runs it at once) and the
    ``scenarios``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    runtime_s: float = Field(default=6.0, gt=0, le=120)
    log_ms: int = Field(default=100, ge=10, le=1000)
    scenarios: tuple[Scenario, ...] = ()


class LabPlan(BaseModel):
    """A lab plan (see the module's docstring): the test ``file_size`` and the ``memory_limit`` (bytes),
    the ``cache`` and ``throttle`` experiments."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    file_size: int
    memory_limit: int
    cache: CachePlan | None = None
    throttle: ThrottlePlan | None = None

    _sizes = field_validator("file_size", "memory_limit", mode="before")(lambda cls, v: _size(v))

    @model_validator(mode="after")
    def _fits(self) -> LabPlan:
        if self.cache is not None:
            for p in self.cache.planned():
                if p.working_set * self.memory_limit > self.file_size:
                    raise ValueError(f"cache point {p.name}: its working set exceeds file_size")
        if self.memory_limit < 8 * 2**20:
            raise ValueError("memory_limit below 8 MiB: fio itself would not run in it")
        return self

    def working_set_bytes(self, point: CachePoint) -> int:
        """The point's working set in bytes, a whole number of blocks."""
        bs = self.cache.block_size if self.cache else 4096
        return int(point.working_set * self.memory_limit) // bs * bs


def load_lab_plan(path: str | Path) -> LabPlan:
    """A lab plan from its YAML file; a bad key is named with the file and what is allowed."""
    data = read_yaml(path, LabPlanError, "lab plan file not found")
    if not isinstance(data, dict):
        raise LabPlanError(
            f"{path}: a lab plan is a mapping (name, file_size, memory_limit, cache, throttle)"
        )
    data.setdefault("name", Path(path).stem)
    try:
        plan = LabPlan(**data)
        if plan.cache is not None:
            plan.cache.planned()
    except ValidationError as err:
        lines = [f"  {p.key}: {p.message}{p.given}" for p in problems(err)]
        raise LabPlanError(f"{path}: not a valid lab plan\n" + "\n".join(lines)) from None
    except LabPlanError as err:
        raise LabPlanError(f"{path}: {err}") from None
    return plan


#: The CI's plan (see the module's docstring).
QUICK_PLAN = LabPlan(
    name="lab-quick",
    file_size=64 * 2**20,
    memory_limit=32 * 2**20,
    cache=CachePlan(ramp_s=1.0, runtime_s=1.0, points=(
        CachePoint(distribution="random", working_set=0.5), CachePoint(distribution="random", working_set=2),
        CachePoint(distribution="zipf:1.2", working_set=2))),
    throttle=ThrottlePlan(runtime_s=2.0, scenarios=(
        Scenario(name="iops200", throttle=Throttle(read_iops=200), unthrottled=1, iodepth=8),
        Scenario(name="bps2m", throttle=Throttle(read_bps=2 * 10**6), unthrottled=0, block_size=65536,
                 iodepth=4))),
)  # fmt: skip
