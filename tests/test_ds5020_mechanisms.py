"""The DS5020 mechanisms of issue 66, item 5, each checked on its own property: the eight Orion tests of
the four-tile run and Orion's documented settings, and the host ports' per-IO time."""

from __future__ import annotations

import polars as pl
import pytest

from storagelab.kernel import Link
from storagelab.studies.ds5020 import preset
from storagelab.studies.ds5020.claims import _orion_table3_total
from storagelab.studies.ds5020.preset import ds5020, ds5020_characterization
from storagelab.studies.ds5020.workloads import (
    ORION_LARGE,
    ORION_TESTS_PER_TILE,
    cache_iops_workload,
    orion_large,
    orion_small,
    orion_test_name,
    tile_workload,
)

KiB, MiB = 1024, 1024 * 1024


# --- Orion: eight tests in parallel, with Orion's own settings --------------------------------------------


def test_the_four_tile_run_has_eight_orion_tests_two_on_each_oracle_lun():
    """Figure 17: 'one of eight Orion tests running in parallel' in the four-tile test. Table 1 gives each
    tile one Oracle LUN, so two tests per tile, each with the full command line (25 small IOs outstanding
    at the IOPS point), each reported under its own name."""
    assert ORION_TESTS_PER_TILE == 2
    streams = [s for s in tile_workload(4).streams if s.name.startswith("orion")]
    assert len(streams) == 8
    by_lun: dict[str, list[str]] = {}
    for s in streams:
        by_lun.setdefault(s.volume, []).append(s.name)
        assert s.workers == 25 and s.outstanding == 1  # each test its own 25 outstanding
    assert by_lun == {f"oracle-{t}": [orion_test_name(t, 1), orion_test_name(t, 2)] for t in range(1, 5)}
    # at the MB/s point each test keeps its own 9 large IOs outstanding: 18 on each LUN
    large = [s for s in tile_workload(4, ("large", 9)).streams if s.volume == "oracle-1"]
    assert sum(s.workers for s in large) == 18
    # one tile, one Oracle LUN, two tests; the count can be varied
    assert len([s for s in tile_workload(1).streams if s.name.startswith("orion")]) == 2
    assert len([s for s in tile_workload(1, orion_tests=1).streams if s.name.startswith("orion")]) == 1


def test_orion_params_are_the_appendix_settings():
    """Appendix, Table 8 and Figure 17: 'Simulated Array Type: RAID 0', 'Stripe Depth: 1024 KB',
    'Num_disks: 5', and Figure 17's 'eight Orion tests running in parallel'. Orion's large random IOs
    are one simulated stripe each, so aligned to the 1 MB stripe."""
    for make in (orion_small, orion_large):
        p = make().params
        assert p["simulated_array"].value == "RAID 0" and p["simulated_array"].origin == "document"
        assert p["stripe_depth"].value * KiB == 1 * MiB
        assert p["num_disks"].value == 5
        assert p["parallel_tests"].value == 2 and p["parallel_tests"].origin == "document"
    assert ORION_LARGE.align == orion_large().params["stripe_depth"].value * KiB == ORION_LARGE.max_size
    assert orion_small(parallel_tests=1).params["parallel_tests"].origin == "user"


def test_table_3_rows_and_total_read_one_test_per_tile():
    """Figure 17 (one test's report: 882 IOPS, 108.27 MB/s, 5.42 ms) is a tile row of Table 3, whose total
    (3,539) is the sum of its four rows: so each row, and the total, read one of the tile's two tests."""

    class Result:
        def summary(self) -> pl.DataFrame:
            names = [orion_test_name(t, j) for t in range(1, 5) for j in (1, 2)]
            return pl.DataFrame(
                {"class": names, "iops": [100.0 * t + j for t in range(1, 5) for j in (1, 2)]}
            )

    assert _orion_table3_total(Result()) == pytest.approx(sum(100.0 * t + 1 for t in range(1, 5)))


# --- the host ports' per-IO time ---------------------------------------------------------------------------


def test_host_port_per_io_time_is_an_assumption_with_the_era_range():
    p = ds5020().params["host_port_overhead"]
    assert p.origin == "assumption" and p.unit == "us"
    low, high = preset.HOST_PORT_OVERHEAD_RANGE_US
    assert low <= p.value <= high
    assert f"{low:g}-{high:g} us" in p.source and "Not fitted on Table 5" in p.source
    paths = next(c for c in ds5020_characterization().stages if c.name == "host paths").components
    assert paths and all(isinstance(x, Link) and x.per_io_overhead == pytest.approx(5e-6) for x in paths)


def test_host_port_per_io_time_caps_iops_from_cache_below_the_line_rate():
    """With the controllers' per-IO time cut to 0.1 us, the two host paths (one per controller) are what
    bind 512 B cache reads. At line rate alone a path could carry 800 MB/s / 512 B = 1.56 M IO/s; each
    port's 5 us per IO, on the request direction, caps it at 200,000 IO/s (a read's 512 B go back on the
    other direction)."""
    iops = {}
    for port in ("5 us", "0 us"):
        topo = ds5020_characterization(2, controller_overhead="0.1 us", host_port_overhead=port)
        res = topo.run(cache_iops_workload(), seed=1, duration=0.1, warmup=0.05)
        iops[port] = float(res.summary()["iops"].sum())
    cap = 2 / 5e-6
    assert 0.85 * cap <= iops["5 us"] <= 1.01 * cap  # the ports bind
    assert iops["0 us"] > 3 * iops["5 us"]  # without their per-IO time, the paths carry far more
