"""The DS5020 mechanisms of issue 66, item 5, each checked on its own property: the eight Orion tests of
the four-tile run and Orion's documented settings, the host ports' per-IO time, and Jetstress's figures
as averages over the Orion phases its two-hour run spans."""

from __future__ import annotations

import polars as pl
import pytest

from storagelab.kernel import Link
from storagelab.studies.ds5020 import preset
from storagelab.studies.ds5020.claims import _mean_ms, _orion_table3_total, _times, _total, scenarios
from storagelab.studies.ds5020.preset import ds5020, ds5020_characterization
from storagelab.studies.ds5020.workloads import (
    JETSTRESS_LOGGED_S,
    ORION_LARGE,
    ORION_LARGE_PHASE,
    ORION_TESTS_PER_TILE,
    cache_iops_workload,
    orion_large,
    orion_large_share,
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


# --- Jetstress's two hours span Orion's matrix -------------------------------------------------------------


def test_orion_large_phase_is_a_fifth_of_jetstress_logged_run():
    """Figure 16 logs Jetstress from 3:41:50 PM to 5:43:56 PM (7,326 s); Orion's basic matrix has ten large
    points with IOs outstanding (Large = 1..10), 150 s each, all inside that run."""
    assert JETSTRESS_LOGGED_S == 7326
    assert orion_large_share() == pytest.approx(10 * 150 / 7326)
    assert orion_large_share(1) == pytest.approx(2 * 150 / 7326)


def _jetstress_1_read_ms(tiles: int, orion: tuple[str, int], **overrides: object) -> float:
    res = ds5020(**overrides).run(tile_workload(tiles, orion), seed=1, duration=2.0, warmup=0.5)
    s = res.summary().filter(pl.col("class") == "jetstress 1 db read")
    return float(s["mean_ms"][0])


def test_orion_large_ios_slow_another_tiles_exchange_reads_through_the_shared_drive_channels():
    """With two tiles, controller A owns tile 1's Exchange database and tile 2's Oracle LUN (Figure 20):
    Orion's 1 MB IOs (two 512 KB segments each) hold A's 4 Gb drive channels and tile 1's 8 KB database
    reads wait behind them. With channels too fast to queue, the large phase leaves those reads alone."""
    small, large = _jetstress_1_read_ms(2, ("small", 25)), _jetstress_1_read_ms(2, ORION_LARGE_PHASE)
    assert large > small + 1.5
    fast = {"drive_channel_rate": "40000 MB/s"}
    assert (
        abs(
            _jetstress_1_read_ms(2, ORION_LARGE_PHASE, **fast)
            - _jetstress_1_read_ms(2, ("small", 25), **fast)
        )
        < 0.5
    )


def test_two_tile_jetstress_figures_are_time_averages_over_orions_phases():
    """The two-tile scenario's Jetstress IOPS and latency are the time average of a run in Orion's large
    phase (weight :func:`orion_large_share`) and one at its small point (the rest)."""
    scenario = next(s for s in scenarios() if s.name == "2-tile mixed run")
    got = scenario.run(1, True)
    w = orion_large_share()
    parts = []
    for orion in (("small", 25), ORION_LARGE_PHASE):
        res = ds5020().run(tile_workload(2, orion), seed=1, **_times(True))
        iops = sum(_total(res, f"jetstress {t} db") for t in (1, 2))
        parts.append((iops, _mean_ms(res, "jetstress 1 db read")))
    (iops_s, lat_s), (iops_l, lat_l) = parts
    assert lat_l > lat_s + 1.0
    assert got["ds5020-t2-latency-t2"] == pytest.approx((1 - w) * lat_s + w * lat_l)
    assert got["ds5020-t2-iops-t2"] == pytest.approx((1 - w) * iops_s + w * iops_l)


def test_read_coalescing_is_an_even_choice_that_decides_the_characterization():
    """Whether a read on a block still filling waits for that fill is not stated: an assumption drawn 0 or 1
    with equal weights, declared 1. It decides the characterization, whose four workers per LUN stay in
    step: with coalescing, three reads in four wait on the first's fill and the eight host paths bind
    (6.4 GB/s, 75 % from cache); without, every read goes to the drives (the drive channels' 1.6 GB/s,
    nothing from cache). The published 3.1 GB/s and 42 % lie between the two."""
    from storagelab.studies.ds5020.claims import _cache_share
    from storagelab.studies.ds5020.workloads import characterization_workload
    from storagelab.uncertainty.distributions import Choice

    p = ds5020_characterization().params["read_coalescing"]
    assert (p.value, p.origin) == (1, "assumption")
    assert isinstance(p.uncertainty, Choice) and set(p.uncertainty.values) == {0, 1}
    assert len(set(p.uncertainty.weights)) == 1
    got = {}
    for coalescing in (1, 0):
        topo = ds5020_characterization(8, read_coalescing=coalescing)
        res = topo.run(characterization_workload(), seed=1, duration=0.5, warmup=0.25)
        got[coalescing] = (_total(res, "seq", "mb_per_s") / 1e3, _cache_share(topo, res))
    assert got[1][0] == pytest.approx(6.4, rel=0.02) and got[1][1] == pytest.approx(75, abs=1)
    assert got[0][0] == pytest.approx(1.6, rel=0.05) and got[0][1] == pytest.approx(0, abs=0.5)
