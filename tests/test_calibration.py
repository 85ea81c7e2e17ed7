"""Calibration: the rules that turn points into claims and claims into a headline (on synthetic scenarios
whose values are set by the test), one real calibration (vsan, quick), the ``storagelab calibrate``
command, and the stored fit constants re-derived."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable

import polars as pl
import pytest
from scipy import stats
from typer.testing import CliRunner

import storagelab.studies.calibration
from storagelab import calibration, studies
from storagelab.architectures.parameters import ParamSet
from storagelab.calibration import CalibrationResult, Point, Scenario, run_scenarios
from storagelab.calibration.claims import published_value
from storagelab.cli import app
from storagelab.provenance import Param, capacity_scale
from storagelab.studies.vsan import preset as vsan_preset

runner = CliRunner()


@pytest.fixture(scope="module")
def vsan_result() -> CalibrationResult:
    """The one real calibration of this file: vsan, quick, two replications, one per perturbed run."""
    return studies.calibrate("vsan", quick=True, replications=2, perturbed_replications=1, seed=1)


def _scenario_points(study: str) -> set[str]:
    return {p.key for sc in studies.scenarios(study) for p in sc.points}


def _capacity(value: float = 1000.0) -> float:
    """A number that scales with the capacity, as a preset's capacity-setting parameter does."""
    ps = ParamSet("synthetic", {"rate": Param(value, "IOPS", "assumption", "test", capacity="rate")})
    return ps["rate"].value


def _run(*scenarios: Scenario, fitted: set[str] = frozenset(), sensitivity: bool = True) -> CalibrationResult:
    return run_scenarios(list(scenarios), set(fitted), replications=3, sensitivity=sensitivity, seed=1)


# -- the rules ------------------------------------------------------------------------------------------


def test_a_conflict_group_counts_once_and_is_scored_against_its_range():
    # vsan-af-qos5-vm32 (99.5 %) and vsan-af-sweet-qos5-vm32 (99.6 %) state the same number twice
    a = Point("vsan", "vsan-af-qos5-vm32", "share")
    b = Point("vsan", "vsan-af-sweet-qos5-vm32", "share")
    assert a.claim_id == b.claim_id == "vsan-af-qos5-vm32"
    sc = Scenario("vsan", "s", (a, b), lambda seed, quick: {a.key: 50.0, b.key: 99.55})
    result = _run(sc)
    assert result.to_frame().height == 2  # both rows shown
    claims = result.claims()
    assert claims.height == 1 and claims["points"][0] == 2
    assert result.pass_rates().row(-1, named=True)["informative_predicted"] == 1
    assert not claims["pass"][0]  # one side misses: the claim fails

    # DS5020 Orion IOPS: 3,539 (Table 3), 3,593 (summary), 4,144 (The Bigger Truth)
    orion = Point("ds5020", "ds5020-t3-iops-total", "Orion IOPS")
    assert orion.published_range == (3539.0, 4144.0)
    assert orion.passes(4144.0 * 1.14) and not orion.passes(4144.0 * 1.16)
    assert orion.passes(3539.0 * 0.86) and not orion.passes(3539.0 * 0.84)
    assert orion.error(3800.0) == 0.0 and orion.error(5000.0) == pytest.approx(856.0)


def test_per_tile_rows_and_their_total_are_one_claim():
    points = [
        Point("ds5020", f"ds5020-t4-web-iops-tile{t}", "web", claim="ds5020-t4-web-iops") for t in range(1, 5)
    ]
    points.append(Point("ds5020", "ds5020-t4-web-iops-total", "web", claim="ds5020-t4-web-iops"))
    sc = Scenario("ds5020", "s", tuple(points), lambda seed, quick: {p.key: p.published for p in points})
    claims = _run(sc, sensitivity=False).claims()
    assert claims.height == 1 and claims["points"][0] == 5


def test_the_real_tables_count_each_claim_once():
    keys = [(p.study, p.claim_id) for sc in studies.scenarios() for p in sc.points]
    claims = set(keys)
    assert len(claims) < len(keys)
    # the nine XtremIO checks of one sentence are one claim
    assert sum(1 for s, c in claims if c == "xio-latency-sub-ms") == 1


def test_a_nan_replication_fails_its_point_and_stays_in_the_denominator():
    p = Point("vsan", "vsan-af-iops-vm32", "IOPS")

    def run(seed: int, quick: bool) -> dict[str, float]:
        return {p.key: math.nan if seed == 2 else p.published}

    result = _run(Scenario("vsan", "s", (p,), run))
    row = result.to_frame().row(0, named=True)
    assert row["pass"] is False
    assert "FAILED: 1 of 3 replications" in row["note"]
    assert row["simulated"] == pytest.approx(p.published)  # the finite replications are still shown
    total = result.pass_rates().row(-1, named=True)
    assert total["informative_predicted"] == 1 and total["within_tolerance"] == 0


def test_a_replication_that_raises_fails_its_point():
    p = Point("vsan", "vsan-af-iops-vm32", "IOPS")

    def run(seed: int, quick: bool) -> dict[str, float]:
        raise RuntimeError("the array saturated")

    with pytest.warns(UserWarning, match="saturated"):
        row = _run(Scenario("vsan", "s", (p,), run)).to_frame().row(0, named=True)
    assert row["pass"] is False and "RuntimeError: the array saturated" in row["note"]


def test_a_bound_is_checked_as_the_bound():
    over = Point("nexgen", "s1-iops-burst", "over 20,000", "at-least")
    assert over.published == 20000.0
    assert over.passes(20000.0) and not over.passes(19999.0) and not over.passes(17000.0)
    under = Point("vplex", "xio-latency-sub-ms", "sub-millisecond", "at-most")
    assert under.passes(1.0) and not under.passes(1.01) and not under.passes(1.9)
    assert not over.passes(math.nan) and not under.passes(math.nan)


def test_a_derived_point_is_shown_but_not_counted():
    derived = Point("nexgen", "s1-boot-time", "storm length", derived=True)
    predicted = Point("nexgen", "s1-iops-burst", "peak", "at-least")
    sc = Scenario("nexgen", "s", (derived, predicted),
                  lambda seed, quick: {derived.key: 5.0, predicted.key: 20 * _capacity()})  # fmt: skip
    result = _run(sc)
    rows = result.to_frame()
    assert rows.height == 2
    assert rows.filter(pl.col("point") == "s1-boot-time")["role"][0] == "derived"
    total = result.pass_rates().row(-1, named=True)
    assert total["derived"] == 1 and total["informative_predicted"] == 1
    assert result.derived()["claim"].to_list() == ["s1-boot-time"]


def test_a_claim_that_passes_whatever_the_capacity_is_insensitive():
    fixed = Point("vsan", "vsan-af-iops-vm32", "IOPS, whatever the capacity")
    scaled = Point("vsan", "vsan-af-qos2-vm64", "share that moves with capacity")

    def run(seed: int, quick: bool) -> dict[str, float]:
        return {fixed.key: fixed.published, scaled.key: scaled.published * _capacity() / 1000}

    result = _run(Scenario("vsan", "s", (fixed, scaled), run))
    frame = result.to_frame()
    assert frame.filter(pl.col("point") == fixed.key)["sensitive"][0] is False
    assert frame.filter(pl.col("point") == scaled.key)["sensitive"][0] is True
    assert frame.filter(pl.col("point") == scaled.key)["simulated_half"][0] == pytest.approx(
        scaled.published / 2
    )
    total = result.pass_rates().row(-1, named=True)
    assert (total["informative_predicted"], total["within_tolerance"], total["insensitive_predicted"]) == (
        1,
        1,
        1,
    )


def test_a_perturbed_run_is_made_only_where_it_can_change_a_claims_sensitivity():
    """A claim is sensitive unless it passes in the main run and at both capacity scales, so a scale is
    run only while some point of the scenario has passed every run so far (halved first, then doubled);
    the classification is the one every run would give."""
    calls: list[tuple[str, float]] = []

    def scenario(name: str, point: Point, value: Callable[[float], float]) -> Scenario:
        def run(seed: int, quick: bool) -> dict[str, float]:
            scale = _capacity() / 1000
            calls.append((name, scale))
            return {point.key: value(scale)}

        return Scenario("vsan", name, (point,), run)

    fails = Point("vsan", "vsan-af-iops-vm32", "fails in the main run")
    halved = Point("vsan", "vsan-af-iops-vm64", "passes, fails when halved")
    holds = Point("vsan", "vsan-af-qos2-vm64", "passes whatever the capacity")
    result = _run(
        scenario("a", fails, lambda scale: 0.0),
        scenario("b", halved, lambda scale: halved.published * min(scale, 1.0)),
        scenario("c", holds, lambda scale: holds.published),
    )
    made = {name: sorted(s for n, s in calls if n == name) for name in "abc"}
    # 3 main replications, 2 per perturbed run (run_scenarios' default)
    assert made == {"a": [1.0] * 3, "b": [0.5] * 2 + [1.0] * 3, "c": [0.5] * 2 + [1.0] * 3 + [2.0] * 2}
    frame = result.to_frame()
    assert frame["sensitive"].to_list() == [True, True, False]
    assert frame["pass_half"].to_list() == [None, False, True]
    assert frame["pass_double"].to_list() == [None, None, True]
    assert frame.filter(pl.col("scenario") == "a")["simulated_half"].is_nan().all()


def test_a_fitted_claim_is_counted_apart():
    p = Point("vsan", "vsan-af-iops-vm64", "IOPS")
    result = _run(Scenario("vsan", "s", (p,), lambda seed, quick: {p.key: p.published * _capacity() / 1000}),
                  fitted={"vsan-af-iops-vm64"})  # fmt: skip
    total = result.pass_rates().row(-1, named=True)
    assert (total["fitted"], total["fitted_within_tolerance"], total["informative_predicted"]) == (1, 1, 0)


def _director(**overrides: object) -> ParamSet:
    """A VPLEX-like director: a fitted time per pass (fitted on the read-hit latency) and a back end
    whose latency comes from a datasheet; both are capacity-setting."""
    return ParamSet(
        "synthetic director",
        {
            "pass_time": Param(85.0, "us", "fit", "one pass fitted on the read hit", fitted_on=("readhit-latency-range-low",),
                               capacity="time"),
            "back_end": Param(300.0, "us", "datasheet", "the array's write latency", capacity="time"),
        },
        overrides,
    )  # fmt: skip


def test_a_claim_that_is_a_multiple_of_a_fit_comes_out_insensitive():
    """The sensitivity runs perturb what was not fitted: a claim that is arithmetic on a fitted parameter
    (here three director passes, 0.255 ms, inside the stated 0.2-0.6 ms band) passes at every scale and is
    set apart as insensitive; one that the datasheet back end moves stays informative."""
    adder = Point(
        "vplex",
        "write-adder-local-range-low",
        "write adder",
        range_with="write-adder-local-range-high",
        claim="vplex-write-adder-local",
    )
    native = Point("vplex", "readmiss-adder-local-overview-range-low", "a back-end latency")

    def run(seed: int, quick: bool) -> dict[str, float]:
        p = _director()
        return {adder.key: 3 * p["pass_time"].value / 1e3, native.key: p["back_end"].value / 1e3 - 0.13}

    result = _run(Scenario("vplex", "adders", (adder, native), run), fitted={"readhit-latency-range-low"})
    claims = {r["claim"]: r for r in result.claims().iter_rows(named=True)}
    assert claims["vplex-write-adder-local"]["pass"] and not claims["vplex-write-adder-local"]["sensitive"]
    assert claims["vplex-readmiss-adder"]["sensitive"]
    with capacity_scale(2.0):
        assert _director()["pass_time"].value == 85.0  # held: a refit on its own point would hold it
        assert _director()["back_end"].value == 150.0
    assert _director().capacity_params() == ["back_end"]


def test_tolerances_by_unit():
    assert Point("vsan", "vsan-af-iops-vm64", "x").tolerance() == pytest.approx(0.15 * 39500.0)
    assert Point("vsan", "vsan-af-qos2-vm64", "x").tolerance() == 5.0
    latency = Point("ds5020", "ds5020-t2-latency-t3", "read latency")  # 0.016 s in the dataset
    assert latency.unit == "ms" and latency.published == pytest.approx(16.0)
    assert latency.tolerance() == pytest.approx(3.2)
    small = Point("ds5020", "ds5020-f16-log-log-write-lat", "log write latency")  # "0.0004" s
    assert small.stated_precision() == pytest.approx(0.1)  # the last stated digit: 0.0001 s
    assert small.tolerance() == pytest.approx(0.1)  # not 1 ms: it would accept anything up to 1.4 ms
    assert small.passes(0.5) and not small.passes(0.51) and not small.passes(1.4)
    ilio = Point("ilio", "iom-ilio-lat-read", "read latency")  # "0.4349" ms
    assert ilio.tolerance() == pytest.approx(0.2 * 0.4349)  # 20 % is wider than 0.0001 ms
    assert not ilio.passes(0.607)  # the fitted value that passed under the 1 ms floor
    micro = Point("vplex", "write-adder-local-range-low", "write adder")  # 200 us, stated in us
    assert micro.unit == "ms" and micro.tolerance() == pytest.approx(0.04)  # 20 %: the floor is 1 us
    assert not micro.passes(0.9)  # a 1 ms floor would have passed anything under 1.2 ms


def test_a_range_is_scored_against_both_ends():
    """A stated range is the band itself: no tolerance added to its ends."""
    p = Point(
        "vplex", "write-adder-local-range-low", "write adder", range_with="write-adder-local-range-high"
    )
    assert p.published_range == pytest.approx((0.2, 0.6))
    assert p.passes(0.2) and p.passes(0.4) and p.passes(0.6)
    assert not p.passes(0.199) and not p.passes(0.601)
    with pytest.raises(ValueError, match="other end of a range"):
        Point("vplex", "write-adder-local-range-low", "x", range_with="write-adder-metro-range-low")


def test_a_point_reads_its_row_as_the_row_states_and_cannot_be_told_otherwise():
    assert Point("vsan", "vsan-af-iops-vm32", "x").comparison == "just-over"  # "over 37,000" (results)
    assert Point("ds5020", "ds5020-scan-min-stream", "x").comparison == "at-least"  # "at least 90 MB/sec"
    assert Point("vplex", "xio-latency-sub-ms", "x").comparison == "at-most"
    assert Point("nexgen", "s2-cache-iops-burst", "x").comparison == "two-sided"  # approx
    with pytest.raises(TypeError, match="comparison"):
        Point("vsan", "vsan-af-iops-vm32", "x", comparison="two-sided")  # type: ignore[call-arg]


def test_point_rejects_an_unknown_row():
    with pytest.raises(KeyError, match="no-such-row"):
        _ = Point("vsan", "no-such-row", "x").published


def test_result_round_trips_through_csv(tmp_path):
    p = Point("vsan", "vsan-af-iops-vm32", "IOPS")
    result = _run(Scenario("vsan", "s", (p,), lambda seed, quick: {p.key: 1.01 * p.published}))
    path = result.to_csv(tmp_path / "cal.csv")
    assert list(tmp_path.iterdir()) == [path]
    again = CalibrationResult.read_csv(path)
    assert again.pass_rates().equals(result.pass_rates())
    assert again.to_frame()["simulated"][0] == pytest.approx(result.to_frame()["simulated"][0], rel=1e-6)
    with pytest.raises(FileNotFoundError, match="calibrate"):
        CalibrationResult.read_csv(tmp_path / "missing.csv")


# -- the real calibration -------------------------------------------------------------------------------


def test_vsan_table_has_every_point_and_the_claim_columns(vsan_result):
    t = vsan_result.to_frame()
    assert tuple(t.columns) == calibration.COLUMNS
    assert set(t["point"]) == _scenario_points("vsan")  # no row dropped
    for col in ("claim", "role", "sensitive", "pass"):
        assert t[col].null_count() == 0, col
    assert set(t["role"]) <= {"fitted", "predicted", "derived"}
    fitted = studies.fitted_points("vsan")
    assert set(t.filter(pl.col("role") == "fitted")["point"]) == fitted


def test_the_simulation_reproduces_its_fitted_points(vsan_result):
    """Consistency of the MVA fit with the simulation: every fitted point within tolerance."""
    bad = vsan_result.to_frame().filter((pl.col("role") == "fitted") & ~pl.col("pass"))
    assert bad.is_empty(), bad.select("point", "published", "simulated")


def test_a_scenario_is_deterministic_given_its_seed():
    sc = studies.scenarios("vsan")[0]
    first, second = sc.run(7, True), sc.run(7, True)
    assert first.keys() == {p.key for p in sc.points}
    assert first == second


def test_replications_on_worker_processes_give_the_same_table():
    """Parallel replications (a local Dask cluster of two processes) are scored exactly as serial ones:
    each replication is seeded, and results are put back in seed order."""
    scs = studies.scenarios("vsan")[:2]
    kw = {"replications": 2, "perturbed_replications": 1, "quick": True}
    serial = run_scenarios(scs, set(), workers=1, **kw)
    lines: list[str] = []
    parallel = run_scenarios(scs, set(), workers=2, progress=lines.append, **kw)
    assert parallel.to_frame().equals(serial.to_frame())
    frame = serial.to_frame()
    made = sum(  # per scenario: its 2 main replications and each perturbed run it needed
        2 + sum(frame.filter(pl.col("scenario") == sc.name)[c].is_not_null().any() for c in ("pass_half", "pass_double"))
        for sc in scs
    )  # fmt: skip
    assert len(lines) == made and lines[-1].startswith(f"[{made} of at most 8] ")


def test_workers_must_be_positive():
    with pytest.raises(ValueError, match="workers must be an integer >= 1"):
        run_scenarios(studies.scenarios("vsan")[:1], set(), replications=2, workers=0)


def test_unknown_study_is_refused():
    with pytest.raises(ValueError, match="vsan"):
        studies.scenarios("xtremio")
    with pytest.raises(ValueError, match="replications"):
        studies.calibrate("vsan", replications=1)


# -- what the presets were fitted on ----------------------------------------------------------------------


@pytest.mark.parametrize("study", studies.study_ids())
def test_fitted_points_are_dataset_rows_and_fewer_than_predictions(study, published):
    rows = set(published["row_id"])
    fitted = studies.fitted_points(study)
    assert fitted <= rows, f"fitted on numbers that are not in datasets/: {fitted - rows}"
    points = {p.row_id for sc in studies.scenarios(study) for p in sc.points}
    assert len(points - fitted) >= len(points & fitted), (study, sorted(points & fitted))


@pytest.mark.parametrize("study", studies.study_ids())
def test_scenario_points_belong_to_their_study(study, published):
    study_of = dict(zip(published["row_id"].to_list(), published["study"].to_list(), strict=True))
    for sc in studies.scenarios(study):
        assert all(p.study == sc.study == study_of[p.row_id] for p in sc.points)


# -- stored fit constants, re-derived -------------------------------------------------------------------


def test_vsan_fit_reproduces_the_stored_constants():
    from storagelab.studies.vsan.claims import fit

    assert fit() == pytest.approx(vsan_preset.FITTED_STACK_DELAY_MS, rel=1e-3)


def test_equallogic_test_file_fit_interval_contains_the_stored_value():
    from storagelab.studies.ilio import claims

    fits = [claims.fit(seed, quick=True) for seed in (1, 2, 3, 4)]
    mean, sd = statistics.mean(fits), statistics.stdev(fits)
    half = stats.t.ppf(0.975, len(fits) - 1) * sd / math.sqrt(len(fits))
    assert mean - half <= claims.FITTED_TEST_FILE_GB <= mean + half, (fits, claims.FITTED_TEST_FILE_GB)


def test_arithmetic_fits_are_re_derived_from_the_datasets():
    from storagelab.calibration.claims import published_value
    from storagelab.studies.ds5020.workloads import jetstress
    from storagelab.studies.nexgen import workloads as nexgen_workloads
    from storagelab.workloads.catalogue import boot_storm, dvd_store

    storm = published_value("s1-boot-time") * 60  # "about five minutes"
    interval = (storm - nexgen_workloads.BOOT_DURATION_S) / nexgen_workloads.DESKTOPS
    assert nexgen_workloads.POWER_ON_INTERVAL.value == pytest.approx(interval, rel=1e-9)

    # Jetstress thread think time: Little's law on Figure 16's reads (32 threads; the writes hold none)
    reads, read_lat = published_value("ds5020-f16-db-reads"), published_value("ds5020-f16-db-read-lat")
    think = jetstress().params["thread_think"]
    assert think.origin == "fit" and "ds5020-f16-db-reads" in think.fitted_on
    assert "ds5020-t2-latency-t4" not in think.fitted_on  # an input of the fit, which does not set it
    assert think.value == pytest.approx(1e3 * (32 / reads - read_lat), rel=1e-3)

    # IOs per desktop boot: the Tier-1 peak is a mean over the study's 5-minute window, which holds the
    # whole 170 s storm of 75 desktops
    ios_per_boot = boot_storm().params["ios_per_boot"]
    peak, window_s = published_value("boot-t1-peak"), published_value("boot-window") * 60
    assert published_value("boot-time-75") < window_s
    assert ios_per_boot.origin == "fit" and set(ios_per_boot.fitted_on) == {"boot-t1-peak"}
    assert ios_per_boot.value == pytest.approx(peak * window_s / 75, rel=1e-3)

    oltp = dvd_store().params
    ios_per_order = oltp["ios_per_order"]
    orders_per_s = (published_value("s2-opm-lo") + published_value("s2-opm-hi")) / 2 / 60
    reads = published_value("s2-cache-iops-mean") / orders_per_s  # the cache serves reads only
    assert ios_per_order.origin == "fit"
    assert ios_per_order.value == round(reads / (oltp["read_pct"].value / 100))


# -- the command ----------------------------------------------------------------------------------------


def _must_not_run(*args, **kwargs):
    raise AssertionError("calibrate ran although the input was invalid")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--study", "nosuch"], ["nosuch", "vsan", "ds5020", "ilio", "vplex"]),
        (["--study", "vsan", "--replications", "1"], ["replications"]),
        (["--study", "vsan", "--perturbed-replications", "9"], ["perturbed-replications"]),
    ],
)
def test_cli_bad_arguments_fail_before_running(monkeypatch, args, words):
    monkeypatch.setattr(studies, "calibrate", _must_not_run)
    result = runner.invoke(app, ["calibrate", *args])
    assert result.exit_code == 2, result.output
    assert all(w in result.output for w in words), result.output


def test_cli_out_in_a_missing_folder_fails_before_running(monkeypatch, tmp_path):
    monkeypatch.setattr(studies, "calibrate", _must_not_run)
    missing = tmp_path / "nonexistent" / "dir" / "x.csv"
    result = runner.invoke(app, ["calibrate", "--study", "vsan", "--quick", "--out", str(missing)])
    assert result.exit_code == 2, result.output
    assert str(missing.parent) in result.output
    assert not missing.parent.exists()


def test_cli_writes_every_row_and_prints_the_headline(monkeypatch, tmp_path, vsan_result):
    calls = []

    def fake(study, *, quick, replications, perturbed_replications, seed, progress, workers, uncertainty):
        calls.append((study, quick, replications, perturbed_replications, seed, workers, uncertainty))
        progress("vsan: first scenario")
        return vsan_result

    monkeypatch.setattr(studies, "calibrate", fake)
    out = tmp_path / "cal.csv"
    result = runner.invoke(
        app,
        [
            "calibrate",
            "--study",
            "vsan",
            "--quick",
            "--replications",
            "2",
            "--workers",
            "1",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert calls == [("vsan", True, 2, None, 1, 1, 0)]  # None: calibrate() picks the default; no draws
    assert "vsan: first scenario" in result.output
    assert "informative predicted claims within tolerance" in result.output
    assert "Insensitive predicted claims" in result.output and "Derived claims" in result.output
    assert list(tmp_path.iterdir()) == [out]
    written = pl.read_csv(out)
    assert tuple(written.columns) == calibration.COLUMNS
    assert written.height == vsan_result.to_frame().height


@pytest.mark.parametrize(("quick", "expected"), [(True, (3, 1)), (False, (5, 2))])
def test_default_replications_per_mode(monkeypatch, quick, expected):
    seen = []

    def fake(scs, fitted, *, replications, perturbed_replications, **_kw):
        seen.append((replications, perturbed_replications))

    monkeypatch.setattr(storagelab.studies.calibration, "run_scenarios", fake)
    studies.calibrate("vsan", quick=quick)
    assert seen == [expected]


def test_ilio_fits_are_re_derived_from_the_datasets():
    """ILIO's CPU time per IO: its 2 vCPUs saturate at the Iometer maximum; the Iometer run's outstanding
    IOs per worker: Little's law on the same figures over 4 workers."""
    from storagelab.studies.ilio import claims as ilio_claims
    from storagelab.studies.ilio import preset as ilio_preset

    iops, lat_ms = published_value("iom-ilio-iops"), published_value("iom-ilio-lat-read")
    cpu = ilio_preset.equallogic(ilio=True).param("ilio_cpu_per_io")
    assert cpu.origin == "fit" and cpu.value == pytest.approx(2 / iops * 1e6, abs=0.01)
    outstanding = ilio_claims.iometer_on_ilio_workload().params["outstanding"]
    assert outstanding.origin == "fit" and outstanding.value == round(iops * lat_ms / 1e3 / 4) == 4


def test_changes_lists_the_claims_whose_role_sensitivity_or_result_moved():
    p, q = Point("vsan", "vsan-af-iops-vm32", "IOPS"), Point("vsan", "vsan-af-iops-vm64", "IOPS")
    before = _run(
        Scenario(
            "vsan", "s", (p, q), lambda seed, quick: {p.key: 40000.0, q.key: 39500.0 * _capacity() / 1000}
        )
    )
    after = _run(
        Scenario(
            "vsan", "s", (p, q), lambda seed, quick: {p.key: 30000.0, q.key: 39500.0 * _capacity() / 1000}
        )
    )
    changed = after.changes(before, {"vsan-af-iops-vm32": "read as at least"})
    assert changed.select("claim", "pass_before", "pass", "reason").rows() == [
        ("vsan-af-iops-vm32", True, False, "read as at least")
    ]
    assert after.changes(after).is_empty()


def test_a_bound_in_a_conflict_group_is_its_own_row_s_bound():
    """'a SQL OPM increase over six times' is read from 6 up to 6 plus its tolerance (a measured value just
    above 6), never against the group's low end (5.38, derived from the figures); the two-sided '6X' of
    the same group is scored against the span of the two-sided values."""
    over = Point("nexgen", "opm-ratio-over6", "ratio", claim="opm-ratio")
    six = Point("nexgen", "opm-ratio-6x", "ratio", claim="opm-ratio")
    assert over.published_range == pytest.approx((6.0, 6.9))
    assert not over.passes(5.5) and over.passes(6.0) and not over.passes(7.0)
    assert six.published_range == pytest.approx((5.38, 6.15))


def test_recount_puts_two_runs_counts_side_by_side():
    p = Point("vsan", "vsan-af-iops-vm64", "IOPS")
    before = _run(Scenario("vsan", "s", (p,), lambda seed, quick: {p.key: 39500.0 * _capacity() / 1000}))
    after = _run(Scenario("vsan", "s", (p,), lambda seed, quick: {p.key: 30000.0 * _capacity() / 1000}))
    total = after.recount(before).row(-1, named=True)
    assert (total["study"], total["within_tolerance_before"], total["within_tolerance"]) == ("total", 1, 0)
    assert total["informative_predicted_before"] == total["informative_predicted"] == 1
