"""The results store: a Parquet dataset under ``results/<sweep>/``, one file per run, one row per run x
metric.

A run is keyed by the hash of its target and parameters (:func:`run_key`), its seed, and the code version
(:func:`code_version`: a hash of the package's source and the datasets, so the same checkout gives the same
version in any clone). Each run's file is written to a temporary name and renamed into place, so a reader,
or a sweep killed at any moment, sees a run either complete or absent: re-running a sweep computes only
the runs whose files are missing.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import polars as pl

#: Columns every run file has, before the parameter columns (``p.<name>``) and the metrics.
KEY_COLUMNS = ("sweep", "key", "code_version", "target", "seed", "params_json")


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: equal values give equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


@cache
def code_version() -> str:
    """A short hash of the package's Python source and the ``datasets/`` CSVs it reads."""
    import storagelab

    package = Path(storagelab.__file__).resolve().parent
    files = sorted(package.rglob("*.py"))
    root = package.parents[1]
    files += sorted((root / "datasets").glob("*.csv")) if (root / "datasets").is_dir() else []
    h = hashlib.sha256()
    for f in files:
        h.update(str(f.relative_to(root)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


def run_key(target: str, params: dict[str, Any], seed: int, version: str) -> str:
    """The key of one run: a hash of its target, parameters, seed and code version."""
    text = canonical_json({"target": target, "params": params, "seed": seed, "version": version})
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class ResultsStore:
    """The runs of one sweep, in ``folder`` (``results/<sweep>``): ``runs/<key>.parquet``."""

    def __init__(self, folder: str | os.PathLike, sweep: str) -> None:
        self.folder = Path(folder)
        self.sweep = sweep
        self.runs = self.folder / "runs"

    def path(self, key: str) -> Path:
        return self.runs / f"{key}.parquet"

    def has(self, key: str) -> bool:
        return self.path(key).is_file()

    def done(self) -> set[str]:
        """The keys of the runs already stored."""
        return {p.stem for p in self.runs.glob("*.parquet")} if self.runs.is_dir() else set()

    def write(self, key: str, target: str, params: dict[str, Any], seed: int, version: str,
              metrics: dict[str, float], wall_s: float) -> Path:  # fmt: skip
        """Store one run atomically: a temporary file in the same folder, renamed into place."""
        self.runs.mkdir(parents=True, exist_ok=True)
        flat = {f"p.{k}": (canonical_json(v) if isinstance(v, dict | list) else v) for k, v in params.items()}
        rows = [
            {"sweep": self.sweep, "key": key, "code_version": version, "target": target, "seed": seed,
             "params_json": canonical_json(params), **flat, "metric": m, "value": float(v), "wall_s": wall_s}
            for m, v in metrics.items()
        ]  # fmt: skip
        frame = (
            pl.DataFrame(rows) if rows else pl.DataFrame({c: [] for c in (*KEY_COLUMNS, "metric", "value")})
        )
        fd, tmp = tempfile.mkstemp(dir=self.runs, prefix=f".{key}.", suffix=".tmp")
        os.close(fd)
        try:
            frame.write_parquet(tmp)
            with open(tmp, "rb") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, self.path(key))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return self.path(key)

    def scan(self) -> pl.LazyFrame:
        """Every stored run as one tidy lazy frame (one row per run x metric)."""
        files = sorted(self.runs.glob("*.parquet")) if self.runs.is_dir() else []
        if not files:
            raise FileNotFoundError(f"no runs stored in {self.runs}; run the sweep first")
        return pl.scan_parquet(files, missing_columns="insert", extra_columns="ignore")

    def clean_temporaries(self) -> int:
        """Remove temporary files a killed run left behind; return how many."""
        n = 0
        for tmp in self.runs.glob(".*.tmp") if self.runs.is_dir() else []:
            tmp.unlink(missing_ok=True)
            n += 1
        return n


def read(folder: str | os.PathLike) -> pl.LazyFrame:
    """The runs stored under ``folder`` (``results/<sweep>``) as a lazy Polars frame."""
    folder = Path(folder)
    return ResultsStore(folder, folder.name).scan()
