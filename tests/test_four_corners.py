"""The four corners on systems whose saturation throughput and bottleneck are known in closed form."""

from __future__ import annotations

import polars as pl
import pytest

from storagelab.analysis.four_corners import COLUMNS, CORNERS, four_corners
from storagelab.architectures.parameters import ParamSet
from storagelab.architectures.topology import Topology
from storagelab.kernel import Deterministic, Link, Path, Station


def _array() -> Topology:
    """A 100 MB/s link in front of four servers taking 1 ms per IO whatever its size: 4,000 IOPS for
    small IOs (the servers saturate), 100 MB/s / 1 MiB = 95.4 IOPS for 1 MiB IOs (the link saturates)."""
    disk = Station("disks", Deterministic(1e-3), servers=4)
    return Topology("toy", {"v": Path("v", [Link("link", 100e6), disk])}, ParamSet("toy", {}))


def test_four_corners_find_the_saturating_resource_and_its_rate():
    t = four_corners(_array, span=2**30, outstanding=16, duration=3.0, warmup=0.5)
    assert tuple(t.columns) == COLUMNS
    assert t["corner"].to_list() == [c.name for c in CORNERS]
    rows = {r["corner"]: r for r in t.iter_rows(named=True)}
    for small in ("4 KiB random read", "4 KiB random write"):
        r = rows[small]
        assert r["bottleneck"] == "disks" and r["bottleneck_utilisation"] == pytest.approx(1.0, abs=0.01)
        assert r["iops"] == pytest.approx(4000, rel=0.01)
        assert r["bound_iops"] == pytest.approx(4000, rel=0.01)
        # Little's law: 16 outstanding at 4,000 IOPS wait 4 ms on average
        assert r["mean_ms"] == pytest.approx(16 / 4000 * 1e3, rel=0.05)
    for large in ("1 MiB sequential read", "1 MiB sequential write"):
        r = rows[large]
        assert r["bottleneck"] == "link"
        assert r["mb_per_s"] == pytest.approx(100, rel=0.01)
        assert r["iops"] == pytest.approx(100e6 / 2**20, rel=0.01)


def test_four_corners_refuse_a_span_smaller_than_an_io():
    with pytest.raises(ValueError, match="span"):
        four_corners(_array, span=4096)
    with pytest.raises(ValueError, match="outstanding"):
        four_corners(_array, span=2**30, outstanding=0)


def test_every_study_reports_its_four_corners():
    """Each study's notebook helper runs on its preset and names a bottleneck for every corner."""
    from storagelab.studies.ilio import analysis as ilio

    t = ilio.four_corners(quick=True)
    assert t.height == 4 and t.filter(pl.col("bottleneck") == "").is_empty()
    assert (t["bottleneck_utilisation"] > 0.5).all()
