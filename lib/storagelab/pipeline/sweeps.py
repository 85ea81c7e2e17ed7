"""Sweeps: one scenario function (or one notebook) run over a grid or a list of parameter points and
seeds, on Dask, into a resumable results store.

A sweep spec (YAML, or the same mapping from Python)::

    name: vsan-hosts                         # results/<name>/; letters, digits, '-', '_'
    scenario: storagelab.pipeline.scenarios:vsan_iometer    # "module:function", or  notebook: 11-vsan-scaling
    fixed: {configuration: all-flash NVMe}   # the same for every point
    grid: {vms: [16, 32, 64], hosts: [4, 8]} # the cartesian product ...
    # points: [{vms: 16}, {vms: 64, hosts: 8}]   ... or an explicit list
    seeds: [1, 2, 3]                         # every point runs with each seed
    # max_events: 50000000, max_wall_s: 600  # optional: a scenario run past either stops with an error

Every point is validated before anything runs (a scenario's arguments are bound to its signature and
checked by its ``validate`` if it has one; a notebook's parameters by its schema). A scenario function takes
its parameters and ``seed`` and returns ``{metric: value}``; a notebook point stores its executed copy under
``results/<name>/notebooks/``. Runs already in the store (same parameters, seed and code version) are
skipped, so an interrupted sweep resumes where it stopped.

Execution: an embedded ``LocalCluster`` (one single-threaded worker process per core) by default, or an
existing cluster by ``scheduler`` address (its workers must see the results folder). A task whose worker
dies is retried on another; a progress bar counts finished runs.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from storagelab.input_files import InputFileError, problems, read_yaml
from storagelab.pipeline.results_store import ResultsStore, code_version, run_key


class SweepError(InputFileError):
    """A sweep spec that cannot run; the message names the file, the key or point, and what is allowed."""


class SweepSpec(BaseModel):
    """A sweep: its name, its target (a scenario function or a notebook), the points and the seeds."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9_-]+$", description="the sweep's folder under results/")
    scenario: str | None = Field(default=None, description="'module:function' returning {metric: value}")
    notebook: str | None = Field(default=None, description="a notebook's stem, e.g. 11-vsan-scaling")
    fixed: dict[str, Any] = Field(default={}, description="parameters shared by every point")
    grid: dict[str, list[Any]] = Field(default={}, description="parameter -> values; the cartesian product")
    points: list[dict[str, Any]] = Field(default=[], description="an explicit list of points")
    seeds: list[int] = Field(default=[1], min_length=1, description="seeds; every point runs with each")
    max_events: int | None = Field(
        default=None, gt=0, description="a scenario run stops with an error past this many events"
    )
    max_wall_s: float | None = Field(
        default=None, gt=0, allow_inf_nan=False,
        description="a scenario run stops with an error past this many wall-clock seconds",
    )  # fmt: skip

    @model_validator(mode="after")
    def _one_target_one_kind_of_points(self) -> SweepSpec:
        if (self.scenario is None) == (self.notebook is None):
            raise ValueError("give exactly one of 'scenario' (module:function) and 'notebook'")
        if self.grid and self.points:
            raise ValueError("give either 'grid' or 'points', not both")
        empty = [k for k, v in self.grid.items() if not v]
        if empty:
            raise ValueError(f"grid values must be non-empty lists; empty: {empty}")
        if self.scenario is not None and not re.fullmatch(r"[\w.]+:\w+", self.scenario):
            raise ValueError(f"scenario must be 'module:function', got {self.scenario!r}")
        if self.notebook is not None and (self.max_events is not None or self.max_wall_s is not None):
            raise ValueError("max_events and max_wall_s bound a scenario's simulations, not a notebook's")
        return self

    @property
    def target(self) -> str:
        return self.scenario or f"notebook:{self.notebook}"

    def expand(self) -> list[dict[str, Any]]:
        """Every point's parameters (``fixed`` under each grid combination or listed point)."""
        if self.grid:
            names = list(self.grid)
            combos = [
                dict(zip(names, values, strict=True)) for values in itertools.product(*self.grid.values())
            ]
        else:
            combos = [dict(p) for p in self.points] or [{}]
        return [{**self.fixed, **c} for c in combos]


@dataclass(frozen=True)
class Run:
    """One run of a sweep: a point's parameters with one seed, and its key in the store."""

    index: int
    params: dict[str, Any]
    seed: int
    key: str


def load_spec(spec: str | os.PathLike | Mapping[str, Any]) -> tuple[SweepSpec, str]:
    """A validated spec and where it came from (for messages)."""
    if isinstance(spec, Mapping):
        source, data = "sweep spec", dict(spec)
    else:
        path = Path(spec)
        source = str(path)
        data = read_yaml(path, SweepError, "sweep spec not found")
        if not isinstance(data, dict):
            raise SweepError(
                f"{path}: a sweep spec is a mapping (name, scenario or notebook, grid or points, seeds)"
            )
    try:
        return SweepSpec.model_validate(data), source
    except ValidationError as err:
        lines = [f"  key {p.key!r}: {p.message}" for p in problems(err)]
        raise SweepError(f"{source}: invalid sweep spec\n" + "\n".join(lines) + "\n  allowed keys: "
                         + ", ".join(SweepSpec.model_fields)) from None  # fmt: skip


def resolve_scenario(target: str) -> Callable[..., Mapping[str, float]]:
    """The function named ``module:function``."""
    module, _, name = target.partition(":")
    try:
        fn = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, TypeError, ValueError) as err:  # TypeError: a relative name
        raise SweepError(f"scenario {target!r} cannot be imported: {err}") from None
    if not callable(fn):
        raise SweepError(f"scenario {target!r} is not a function")
    return fn


def plan(spec: SweepSpec, source: str) -> list[Run]:
    """Every run of the sweep, each point validated first (nothing runs if any point is invalid)."""
    points = spec.expand()
    problems = []
    if spec.scenario is not None:
        try:
            fn = resolve_scenario(spec.scenario)
        except SweepError as err:
            raise SweepError(f"{source}, key 'scenario': {err}") from None
        sig = inspect.signature(fn)
        check = getattr(fn, "validate", None)
        for i, p in enumerate(points):
            try:
                sig.bind(**p, seed=spec.seeds[0])
                if check is not None:
                    check(**p)
            except (TypeError, ValueError) as err:
                problems.append(f"  point {i} {p}: {err}")
    else:
        from storagelab.pipeline.params import ParamsError, schema_for, validate_params

        try:
            schema = schema_for(spec.notebook)
        except ParamsError as err:
            raise SweepError(f"{source}: {err}") from None
        for i, p in enumerate(points):
            try:
                validate_params(schema, {**p, "seed": spec.seeds[0]} if "seed" in schema.model_fields else p,
                                f"point {i}")  # fmt: skip
            except ParamsError as err:
                problems.append(f"  {err}".replace("\n", "\n  "))
    if problems:
        raise SweepError(
            f"{source}: {len(problems)} of {len(points)} points are invalid\n" + "\n".join(problems)
        )
    version = code_version()
    runs = [
        Run(i, p, seed, run_key(spec.target, p, seed, version))
        for i, p in enumerate(points)
        for seed in spec.seeds
    ]
    return runs


def execute_run(target: str, params: dict[str, Any], seed: int, key: str, folder: str, sweep: str,
                version: str, root: str | None = None,
                limits: tuple[int | None, float | None] = (None, None)) -> dict[str, Any]:  # fmt: skip
    """Run one point with one seed and store it (this is what a Dask worker executes); a scenario's
    simulations held to ``limits`` (max_events, max_wall_s: :func:`storagelab.kernel.run_limits`)."""
    store = ResultsStore(folder, sweep)
    start = time.perf_counter()
    if target.startswith("notebook:"):
        from storagelab.pipeline.layout import ProjectLayout
        from storagelab.pipeline.notebooks import execute

        layout = ProjectLayout(Path(root)) if root else ProjectLayout.discover()
        stem = target.split(":", 1)[1]
        nb = layout.notebooks / f"{stem}.ipynb"
        values = dict(params)
        out = Path(folder) / "notebooks" / f"{key}.ipynb"
        from storagelab.pipeline.params import schema_for

        takes_seed = "seed" in schema_for(stem).model_fields
        executed = execute(nb, out, {**values, "seed": seed} if takes_seed else values, progress=False)
        metrics = {"code_cells": float(sum(c.cell_type == "code" for c in executed.cells))}
    else:
        from storagelab.kernel.run_limits import run_limits

        with run_limits(*limits):
            result = resolve_scenario(target)(**params, seed=seed)
        metrics = _metrics(target, result)
    wall = time.perf_counter() - start
    store.write(key, target, params, seed, version, metrics, wall)
    return {"key": key, "wall_s": wall, "metrics": len(metrics)}


def _metrics(target: str, result: object) -> dict[str, float]:
    if isinstance(result, Mapping):
        out = {str(k): float(v) for k, v in result.items()}
    elif hasattr(result, "columns") and {"metric", "value"} <= set(result.columns):
        out = {str(m): float(v) for m, v in zip(result["metric"], result["value"], strict=True)}
    else:
        raise TypeError(
            f"scenario {target!r} must return {{metric: value}} or a frame with metric/value columns"
        )
    return out


@dataclass(frozen=True)
class SweepResult:
    """What a sweep did: runs planned, skipped (already stored), computed and failed, and the store."""

    store: ResultsStore
    planned: int
    skipped: int
    computed: int
    failed: tuple[str, ...]
    wall_s: float

    def frame(self):
        """Every stored run of the sweep, tidy (one row per run x metric), as a lazy Polars frame."""
        return self.store.scan()


def sweep(
    spec: str | os.PathLike | Mapping[str, Any],
    *,
    results: str | os.PathLike = "results",
    scheduler: str | None = None,
    workers: int | None = None,
    retries: int = 2,
    progress: bool = True,
    client: Any = None,
) -> SweepResult:
    """Run a sweep (see the module docstring); return what was done. ``scheduler``: the address of an
    existing Dask scheduler; otherwise an embedded ``LocalCluster`` of ``workers`` processes (default:
    the machine's cores). ``client``: an existing ``distributed.Client`` to use instead."""
    from distributed import Client, as_completed
    from tqdm.auto import tqdm

    from storagelab.dask_cluster import local_cluster

    spec_, source = load_spec(spec)
    runs = plan(spec_, source)
    store = ResultsStore(Path(results) / spec_.name, spec_.name)
    store.clean_temporaries()
    done = store.done()
    todo = [r for r in runs if r.key not in done]
    start = time.perf_counter()
    failed: list[str] = []
    if todo:
        own = client is None
        cluster = None
        if own:
            if scheduler:
                client = Client(scheduler)
            else:
                n = workers or os.cpu_count() or 1
                cluster = local_cluster(n)
                client = Client(cluster)
        try:
            root = _project_root()
            version = code_version()
            futures = {
                client.submit(execute_run, spec_.target, r.params, r.seed, r.key, str(store.folder.resolve()),
                              spec_.name, version, root, (spec_.max_events, spec_.max_wall_s),
                              key=f"{spec_.name}-{r.key}", retries=retries, pure=False): r
                for r in todo
            }  # fmt: skip
            bar = tqdm(
                total=len(runs),
                initial=len(runs) - len(todo),
                desc=f"sweep {spec_.name}",
                disable=not progress,
            )
            for fut in as_completed(futures):
                run = futures[fut]
                try:
                    fut.result()
                except Exception as err:  # a failed run stays missing: the next invocation retries it
                    failed.append(
                        f"point {run.index} {run.params} seed {run.seed}: {type(err).__name__}: {err}"
                    )
                bar.update(1)
            bar.close()
        finally:
            if own:
                client.close()
                if cluster is not None:
                    cluster.close()
    return SweepResult(store, len(runs), len(runs) - len(todo), len(todo) - len(failed), tuple(failed),
                       time.perf_counter() - start)  # fmt: skip


def _project_root() -> str | None:
    from storagelab.pipeline.layout import ProjectLayout

    try:
        return str(ProjectLayout.discover().root)
    except FileNotFoundError:
        return None
