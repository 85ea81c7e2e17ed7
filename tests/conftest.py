"""Shared fixtures: the project layout, the loaded datasets, and the source documents when present."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from storagelab.pipeline.layout import ProjectLayout
from storagelab.published import datasets

ROOT = Path(__file__).resolve().parents[1]
#: The source documents live outside the project (../shared/seeds); tests that need them skip without.
SEEDS = ROOT.parent / "shared" / "seeds"


@pytest.fixture(scope="session")
def layout() -> ProjectLayout:
    return ProjectLayout(ROOT)


@pytest.fixture(scope="session")
def published() -> pl.DataFrame:
    return datasets.load()


@pytest.fixture(scope="session")
def seeds() -> Path:
    if not (SEEDS / "README.md").is_file():
        pytest.skip("source documents (../shared/seeds) not present in this checkout")
    return SEEDS
