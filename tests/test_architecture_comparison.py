"""The workload mix as data, its placement on an architecture's volumes, and the comparison of
architectures on it (checked end to end on a published curve whose answer is known in closed form)."""

from __future__ import annotations

import itertools
import math

import polars as pl
import pytest

from storagelab import studies
from storagelab.analysis.comparison import (
    Candidate,
    Comparison,
    Settings,
    _curve_fit,
    _search,
    compare,
    default_placement,
    pilot_ios,
    search_tasks,
)
from storagelab.analysis.workload_mix import WorkloadMix
from storagelab.studies import build
from storagelab.workloads.catalogue.vdi import IOS_PER_BOOT

MIX = {
    "name": "test mix",
    "classes": [
        {"name": "oltp", "workload": "oltp", "size": 4, "service_level": {"metric": "p95_ms", "limit_ms": 30}},
        {"name": "mail", "workload": "exchange", "size": 400, "service_level": {"metric": "mean_ms", "limit_ms": 20}},
        {"name": "vdi", "workload": "boot_storm", "size": 600, "within_min": 5,
         "service_level": {"metric": "p95_ms", "limit_ms": 30}},
    ],
}  # fmt: skip


def test_a_bad_mix_file_names_the_file_the_key_and_what_is_allowed(tmp_path):
    path = tmp_path / "mix.yaml"
    path.write_text(
        "mix:\n  name: m\n  classes:\n    - {name: a, workload: oltpp, size: 0, service_level: {metric: p95, limit_ms: 1}}\n"
    )
    with pytest.raises(ValueError) as err:
        WorkloadMix.from_yaml(path)
    text = str(err.value)
    assert str(path) in text and "classes.0.workload" in text and "'oltp', 'exchange'" in text
    assert "classes.0.size" in text and "greater than 0" in text and "pNN_ms" in text
    with pytest.raises(ValueError, match="class names must be distinct"):
        WorkloadMix.from_mapping({**MIX, "classes": [MIX["classes"][0], MIX["classes"][0]]})
    with pytest.raises(ValueError, match="not found"):
        WorkloadMix.from_yaml(tmp_path / "nope.yaml")


def test_the_multiplier_scales_every_class_and_a_split_class_is_measured_as_one():
    mix = WorkloadMix.from_mapping(MIX)
    placement = studies.candidate("n5", "NexGen N5-150").placement_on(build("NexGen N5-150").volumes)
    one, two = (mix.workload(placement, m) for m in (1.0, 2.0))
    by_name = lambda w: {s.name: s for s in w.streams}  # noqa: E731
    a, b = by_name(one), by_name(two)
    assert a["oltp"].workers == 48 and b["oltp"].workers == 96  # 4 VMs x 12 threads, then 8 VMs
    assert b["mail"].rate == pytest.approx(2 * a["mail"].rate)
    pools = [f"vdi @ vdt-{x}" for x in "abcd"]
    # the storm's plateau: 600 desktops in 5 min at the fitted IOs per boot, a quarter on each VDI LUN
    rate = 600 / (300 - 12) * IOS_PER_BOOT
    assert sum(a[p].rate for p in pools) == pytest.approx(rate) and a[pools[0]].schedule is None
    levels = {lv.cls: lv for lv in mix.service_levels(placement)}
    assert levels["vdi"].members == tuple(pools) and levels["oltp"].members == ("oltp",)


def test_classes_sharing_a_volume_get_extents_one_after_another():
    mix = WorkloadMix.from_mapping(MIX)
    top = build("XtremIO, 1 X-Brick(s)")
    sources = mix.sources(top.volumes, default_placement("XtremIO", top.volumes))
    extents = [s.target for s in sources]
    assert next(e.offset for e in extents) == 0
    for prev, cur in itertools.pairwise(extents):
        assert cur.offset >= prev.offset + prev.length and cur.offset % (1 << 20) == 0
    assert {e.target.name for e in extents} == {top.volumes["lun"].name}
    with pytest.raises(ValueError, match="placement has no volume for workload 'boot_storm'"):
        mix.workload({"oltp": ["lun"], "exchange": ["lun"]})
    with pytest.raises(ValueError, match="several volumes"):
        default_placement("DS5020 Express", build("DS5020 Express").volumes)


def test_compare_finds_the_closed_form_headroom_of_a_published_response_time_law():
    """Exchange alone (0.24 IOPS per mailbox, Poisson) on the station built from the DS5020 Jetstress law
    R = S / (1 - X/Xsat): the mean response stays under L up to X = Xsat (1 - S/L). With L = 15 ms that
    lies inside the published throughputs; with L = 19 ms it lies past the last published point, so the
    answer there is censored at that point."""
    fit = _curve_fit("ds5020_response_time/Jetstress")
    s, xsat = (
        next(p.estimate for p in fit.parameters if p.name == n)
        for n in ("service_time", "saturation_throughput")
    )
    top = float(fit.points["x"].max())
    mailboxes = 10_000
    base = 0.24 * mailboxes

    def mix(limit):
        return WorkloadMix.from_mapping({"name": "mail", "classes": [
            {"name": "mail", "workload": "exchange", "size": mailboxes, "service_level": {"metric": "mean_ms", "limit_ms": limit}}]})  # fmt: skip

    settings = Settings(duration_s=20.0, warmup_s=2.0, replications=2, low=0.125, high=4.0, tolerance=0.02)
    curve = Candidate("DS5020 curve", curve="ds5020_response_time/Jetstress")
    result = compare(mix(15.0), [curve], settings, scheduler="synchronous")
    t = result.table()
    fitted = t.filter(pl.col("bound") == "fit").row(0, named=True)
    exact = xsat * (1 - s / 15.0) / base
    assert exact * base < top and fitted["status"] == "found"
    assert fitted["headroom"] == pytest.approx(exact, rel=0.03)
    assert fitted["low"] <= exact * 1.01 and fitted["high"] >= exact * 0.99
    assert fitted["fails_first"] == "mail mean_ms <= 15 ms"
    lower, upper = (t.filter(pl.col("bound") == b)["headroom"][0] for b in ("lower", "upper"))
    assert lower < fitted["headroom"] < upper or math.isclose(upper, top / base, rel_tol=0.03)
    wide = (
        compare(mix(19.0), [curve], settings, scheduler="synchronous")
        .table()
        .filter(pl.col("bound") == "fit")
    )
    assert xsat * (1 - s / 19.0) > top
    assert wide["status"][0] == "at least (the published range ends)"
    assert wide["headroom"][0] == pytest.approx(top / base, rel=0.03)


@pytest.mark.parametrize("pilot_s", [2.0, 0.0])
def test_the_replication_tasks_give_what_the_searches_run_here_give(pilot_s):
    """compare's tasks (each search's pilot, or first replication, then its replications side by side, on
    two processes) give the rows and the runs that running each search's replications one after another in
    this process gives: the same seeds, the same starts."""
    mix = WorkloadMix.from_mapping({"name": "mail", "classes": [
        {"name": "mail", "workload": "exchange", "size": 10_000, "service_level": {"metric": "mean_ms", "limit_ms": 15.0}}]})  # fmt: skip
    settings = Settings(duration_s=4.0, warmup_s=1.0, replications=3, low=0.125, high=4.0, tolerance=0.05,
                        pilot_s=pilot_s)  # fmt: skip
    curve = Candidate("DS5020 curve", curve="ds5020_response_time/Jetstress")
    result = compare(mix, [curve], settings, scheduler="processes", workers=2)
    here = [_search(mix, curve, settings, bound) for bound in ("fit", "lower", "upper")]
    assert result.rows == [h["row"] for h in here]
    assert all(a.equals(h["evaluations"]) for a, h in zip(result.runs, here, strict=True))
    assert result.runs[0]["seed"].unique().sort().to_list() == [1, 2, 3]
    assert result.runs[0]["pilot"].any() == (pilot_s > 0)


def test_the_cost_of_a_comparison_is_the_ios_its_runs_simulated_pilot_included():
    """``Comparison.cost()``: per search its distinct runs (a run is reported once per service level), their
    simulated seconds and the IOs they issued, which each run made again on its own (same candidate,
    settings, multiplier and seed) issues too; shares sum to 1, largest first."""
    from storagelab.analysis.comparison import candidate_run

    mix = WorkloadMix.from_mapping({"name": "mail", "classes": [
        {"name": "mail", "workload": "exchange", "size": 10_000, "service_level": {"metric": "mean_ms", "limit_ms": 15.0}}]})  # fmt: skip
    curve = Candidate("DS5020 curve", curve="ds5020_response_time/Jetstress")
    settings = Settings(duration_s=4.0, warmup_s=1.0, replications=3, low=0.125, high=4.0, tolerance=0.05)
    found = [_search(mix, curve, settings, bound) for bound in ("fit", "upper")]
    result = Comparison(mix, [curve], settings, [f["row"] for f in found], [f["evaluations"] for f in found])
    cost = result.cost()
    assert sorted(cost["bound"]) == ["fit", "upper"] and cost["ios"].to_list() == sorted(
        cost["ios"], reverse=True
    )
    assert cost["ios_share"].sum() == pytest.approx(1.0)
    for bound in ("fit", "upper"):
        runs = (
            result.evaluations()
            .filter(pl.col("bound") == bound)
            .unique(subset=["pilot", "seed", "multiplier"], maintain_order=True)
        )
        again = 0
        for r in runs.iter_rows(named=True):
            s = settings.pilot if r["pilot"] else settings
            again += candidate_run(mix, curve, s, bound, early_stop=s.early_stop)(
                r["multiplier"], r["seed"]
            ).issued
        row = cost.filter(pl.col("bound") == bound).row(0, named=True)
        assert row["runs"] == runs.height and runs["pilot"].any()
        assert row["ios"] == again > 0
        assert row["simulated_s"] == pytest.approx(runs["run_s"].sum())


def test_a_pilot_of_short_runs_brackets_the_first_replication_and_never_enters_the_headroom():
    """With runs at least twice ``pilot_s`` long, a pilot search of short runs is made first and the first
    replication starts from its final bracket (the later ones from the first's, as without a pilot): the
    search makes fewer long runs than without the pilot, and each answer lies in the other's interval. The
    pilot's runs are in the evaluations, marked, and not in the latency chart's data."""
    from dataclasses import replace

    mix = WorkloadMix.from_mapping({"name": "mail", "classes": [
        {"name": "mail", "workload": "exchange", "size": 10_000, "service_level": {"metric": "mean_ms", "limit_ms": 15.0}}]})  # fmt: skip
    curve = Candidate("DS5020 curve", curve="ds5020_response_time/Jetstress")
    settings = Settings(duration_s=4.0, warmup_s=1.0, replications=3, low=0.125, high=4.0, tolerance=0.05)
    assert settings.pilot == replace(settings, duration_s=2.0, warmup_s=0.5, pilot_s=0.0)
    guided = _search(mix, curve, settings, "fit")
    alone = _search(mix, curve, replace(settings, pilot_s=0.0), "fit")
    ev = guided["evaluations"]
    pilot, runs = ev.filter(pl.col("pilot")), ev.filter(~pl.col("pilot"))
    assert pilot.height and pilot["run_s"].max() <= 2.0 and runs["run_s"].max() == 4.0
    assert not alone["evaluations"]["pilot"].any()
    tried = pilot["multiplier"].to_list()
    lo = max(m for m in tried if pilot.filter(pl.col("multiplier") == m)["ratio"].max() <= 1.0)
    first = runs.filter(pl.col("seed") == 1)
    assert first["multiplier"][0] == lo
    held = first.group_by("multiplier").agg(pl.col("ratio").max()).filter(pl.col("ratio") <= 1.0)
    for seed in (2, 3):  # from the first replication's bracket
        assert runs.filter(pl.col("seed") == seed)["multiplier"][0] == held["multiplier"].max()
    assert runs.height < alone["evaluations"].height
    a, b = guided["row"], alone["row"]
    assert a["status"] == b["status"] == "found"
    assert b["low"] <= a["headroom"] <= b["high"] and a["low"] <= b["headroom"] <= a["high"]
    chart = Comparison(mix, [curve], settings, [a], [ev]).latency_chart()
    assert len(chart.data) == runs.n_unique("multiplier")


def test_a_pilot_without_a_bracket_leaves_each_replication_to_walk_and_one_that_cannot_host_ends_it():
    from storagelab.analysis.comparison import _replication

    mix = WorkloadMix.from_mapping({"name": "mail", "classes": [
        {"name": "mail", "workload": "exchange", "size": 10_000, "service_level": {"metric": "mean_ms", "limit_ms": 15.0}}]})  # fmt: skip
    curve = Candidate("DS5020 curve", curve="ds5020_response_time/Jetstress")
    settings = Settings(duration_s=4.0, warmup_s=1.0, replications=2, low=0.125, high=4.0, tolerance=0.05)
    held = {"row": {"status": "holds at the highest load"}, "evaluations": None}
    walked = _replication(mix, curve, settings, "fit", 0, held, pilot=True)
    assert walked.evaluations[0]["multiplier"] == settings.start and walked.evaluations[0]["seed"] == 1
    cannot = {"row": {"status": "cannot host"}, "evaluations": None}
    assert _replication(mix, curve, settings, "fit", 0, cannot, pilot=True) is cannot
    with pytest.raises(ValueError, match="pilot_s must be >= 0"):
        Settings(pilot_s=-1.0)
    assert Settings(duration_s=3.9).pilot is None and Settings(duration_s=10.0, pilot_s=0.0).pilot is None


def test_bad_candidates_are_refused_before_any_run():
    mix = WorkloadMix.from_mapping(MIX)
    with pytest.raises(ValueError, match="exactly one of preset and curve"):
        Candidate("x")
    with pytest.raises(ValueError, match="family/series"):
        Candidate("x", curve="vsan")
    with pytest.raises(ValueError, match="not found"):
        compare(mix, [Candidate("x", curve="vsan_throughput/hybrid nope")])
    with pytest.raises(ValueError, match="placement names volumes"):
        compare(mix, [studies.candidate("x", "XtremIO, 1 X-Brick(s)", placement={"oltp": ["nope"]})])
    with pytest.raises(ValueError, match="distinct labels"):
        compare(mix, [studies.candidate("x", "XtremIO, 1 X-Brick(s)")] * 2)


def test_a_mix_whose_data_does_not_fit_is_reported_not_run():
    """2,000 desktops' change disks (8 TB) and the rest on a 4-host all-flash Virtual SAN: with two
    copies its 16 x 800 GB hold 6.4 TB, so the comparison says it cannot host the mix, and why."""
    mix = WorkloadMix.from_mapping({"name": "big", "classes": [
        {"name": "desktops", "workload": "vdi_steady", "size": 2000, "service_level": {"metric": "p95_ms", "limit_ms": 20}}]})  # fmt: skip
    settings = Settings(duration_s=0.6, warmup_s=0.1, replications=2)
    t = compare(
        mix, [studies.candidate("vsan", "Virtual SAN 5.5, all-flash NVMe")], settings, scheduler="synchronous"
    )
    row = t.table().row(0, named=True)
    assert row["status"] == "cannot host" and "runs past the capacity" in row["fails_first"]
    assert row["headroom"] is None


@pytest.mark.parametrize("span_tb, fits", [(8, True), (30, False)])
def test_the_nexgen_holds_what_its_drives_hold_not_what_its_flash_tier_holds(span_tb, fits):
    """The N5's 2.4 TB flash tier holds hot data and writes, not an address range: 8 TB of desktops on a
    VDI LUN (more than the flash, less than the 24 TB of 16 x 3 TB drives in RAID-10) runs, with writes
    landing on the cards; 30 TB does not fit the drives and is refused."""
    from storagelab.devices import CapacityExceeded
    from storagelab.kernel import ClosedSource, FixedSampler
    from storagelab.kernel.simulation import simulate
    from storagelab.studies.nexgen.preset import nexgen

    topo = nexgen()
    lun = topo.volumes["vdt-a"]
    src = ClosedSource(
        "desktops", lun, FixedSampler(size=4096, read_pct=50, span=span_tb * 10**12), workers=8
    )
    if not fits:
        with pytest.raises(CapacityExceeded, match="LUN vdt-a"):
            simulate(lun, [src], duration=0.2, seed=1, progress=False)
        return
    res = simulate(lun, [src], duration=0.2, seed=1, progress=False)
    assert res.summary()["count"][0] > 100
    cards = res.components().filter(
        pl.col("component").str.contains("^ioMemory [AB]$") & (pl.col("statistic") == "utilisation")
    )
    assert cards.height == 2 and (cards["value"] > 0).all()


def _row(label: str, bottleneck: str) -> dict:
    return {"architecture": label, "kind": "model", "bound": "fit", "headroom": None, "low": None, "high": None,
            "status": "found", "fails_first": "", "bottleneck": bottleneck, "bottleneck_utilisation": None}  # fmt: skip


@pytest.mark.parametrize("preset", list(studies.registry.PRESETS))
def test_the_table_says_whether_each_bottleneck_s_capacity_is_hardware_or_a_fit(preset):
    """Whichever component of a preset's declared stages is the bottleneck, ``bottleneck_capacity`` says
    where its stage's capacity comes from, as the preset's capacities table does: the origins of the
    parameters that set it when none is a fit, else a fit (with the point where the resource saturates,
    when the stage names one). A published curve is a curve; a row with no bottleneck says nothing."""
    top = build(preset)
    caps = {r["stage"]: r for r in top.capacities().iter_rows(named=True)}
    candidate = Candidate("model", preset=preset, build=studies.registry.PRESETS[preset])
    curve = Candidate("curve", curve="vsan_throughput/all-flash NVMe")
    stages = [(s.name, c.name) for s in top.stages for c in s.components]
    rows = [_row("model", name) for _, name in stages] + [_row("curve", "curve"), _row("model", "")]
    got = Comparison(WorkloadMix.from_mapping(MIX), [candidate, curve], Settings(), rows, []).table()
    said = got["bottleneck_capacity"].to_list()
    assert said[-2:] == ["published curve", ""]
    for (stage, name), text in zip(stages, said, strict=False):
        origins, saturates = caps[stage]["origins"], caps[stage]["saturates"]
        if "fit" not in origins.split(", "):
            assert text == f"hardware ({origins})", (stage, name)
        elif saturates:
            assert text == f"fit (saturates: {saturates})", (stage, name)
        else:
            declared = f"{caps[stage]['concurrency_from']}; {caps[stage]['cost_from']}"
            assert text.startswith("fit (") and all(f"{n} (fit)" in declared for n in text[5:-1].split(", "))


def test_compare_hands_out_one_search_per_dispatch(monkeypatch):
    """Dask's process pool hands tasks out in chunks of six by default, which put six of notebook 19's nine
    searches on one process while the other sat idle (the notebook's comparison cell: 141 s with chunks of
    six, 87 s one at a time, the same results). ``compare`` asks for one task per dispatch."""
    import dask

    seen = {}
    real = dask.compute

    def recording(*tasks, **kwargs):
        seen.update(kwargs)
        return real(*tasks, scheduler="synchronous")

    monkeypatch.setattr(dask, "compute", recording)
    mix = WorkloadMix.from_mapping({"name": "mail", "classes": [
        {"name": "mail", "workload": "exchange", "size": 1000, "service_level": {"metric": "mean_ms", "limit_ms": 15}}]})  # fmt: skip
    settings = Settings(duration_s=5.0, warmup_s=1.0, replications=2, low=0.125, high=4.0, tolerance=0.1)
    compare(mix, [Candidate("DS5020 curve", curve="ds5020_response_time/Jetstress")], settings, workers=2)
    assert seen["scheduler"] == "processes" and seen["num_workers"] == 2 and seen["chunksize"] == 1


def test_searches_start_in_the_order_given_with_published_curves_last():
    """Dask runs independent tasks by its own ordering (by key: notebook 19's NexGen search, the longest,
    started 12 s in, after three shorter ones, and set the comparison's end). The tasks' keys make them
    start in the order given, a curve's three bands after every preset, whatever the labels, and a
    search's later replications right after its first."""
    from dask.order import order

    mix = WorkloadMix.from_mapping(MIX)
    given = [Candidate("z curve", curve="ds5020_response_time/Jetstress"),
             studies.candidate("b first", "XtremIO, 1 X-Brick(s)"),
             studies.candidate("a second", "EqualLogic PS6100E")]  # fmt: skip
    tasks = search_tasks(mix, given, Settings())
    graph = {}
    for t in tasks:
        graph.update(dict(t.__dask_graph__()))
    priority = order(graph)
    keys = [t.key for t in tasks]  # in the order given: the curve's three bands, then the two presets
    started = sorted(keys, key=priority.__getitem__)
    assert started == [keys[3], keys[4], keys[0], keys[1], keys[2]]
    # a search's later replications (from its first's final bracket) start as soon as its first is done, ahead of
    # the next search's first replication
    runs = sorted((k for k in graph if str(k).startswith("replication-")), key=priority.__getitem__)
    first_preset = keys[3].removeprefix("search-")
    assert runs[0] == f"replication-0-{first_preset}"
    assert set(runs[1:3]) == {f"replication-{r}-{first_preset}" for r in (1, 2)}
    # with a pilot search (long runs): the pilot, the first replication, the later ones, then the next pilot
    graph = {}
    for t in search_tasks(mix, given, Settings(duration_s=10.0, warmup_s=2.0)):
        graph.update(dict(t.__dask_graph__()))
    priority = order(graph)
    started = [k for k in sorted(graph, key=priority.__getitem__) if not str(k).startswith("search-")]
    assert started[:2] == [f"pilot-{first_preset}", f"replication-0-{first_preset}"]
    assert set(started[2:4]) == {f"replication-{r}-{first_preset}" for r in (1, 2)}
    assert started[4] == f"pilot-{keys[4].removeprefix('search-')}"


def test_with_their_pilots_done_the_searches_start_costliest_first():
    """Given the finished pilots (:func:`compare` runs them first, side by side), the searches start by the
    IOs their pilots issued, the costliest first (a run counted once, though it has a row per level), ties
    in the order given with the curves last, and each search's later replications still right after its
    first: the longest search (notebook 19's 8-host hybrid Virtual SAN, given second to last) no longer
    starts after the others and runs on alone at the end."""
    from dask.order import order

    mix = WorkloadMix.from_mapping(MIX)
    given = [Candidate("z curve", curve="ds5020_response_time/Jetstress"),
             studies.candidate("b first", "XtremIO, 1 X-Brick(s)"),
             studies.candidate("a second", "EqualLogic PS6100E")]  # fmt: skip

    def pilot(*ios: int) -> dict:  # a finished pilot: two service levels per run, as a search records them
        rows = [
            {"seed": 1, "multiplier": 2.0**k, "level": lv, "ios": n} for k, n in enumerate(ios) for lv in "xy"
        ]
        return {"row": {"status": "fails at the lowest load"}, "evaluations": pl.DataFrame(rows)}

    pilots = [pilot(4, 6), pilot(10), pilot(3, 7), pilot(5), pilot(200, 300)]  # z fit, lower, upper; b; a
    assert [pilot_ios(p) for p in pilots] == [10, 10, 10, 5, 500] and pilot_ios(None) == 0
    settings = Settings(duration_s=10.0, warmup_s=2.0)
    tasks = search_tasks(mix, given, settings, pilots)
    graph = {}
    for t in tasks:
        graph.update(dict(t.__dask_graph__()))
    assert not any(str(k).startswith("pilot-") for k in graph)  # the pilots are done: values, not tasks
    priority = order(graph)
    keys = [t.key for t in tasks]
    firsts = sorted((k for k in graph if str(k).startswith("replication-0-")), key=priority.__getitem__)
    expected = [keys[4], keys[0], keys[1], keys[2], keys[3]]  # a (500), the curve's bands (10 each), b (5)
    assert firsts == [f"replication-0-{k.removeprefix('search-')}" for k in expected]
    runs = sorted((k for k in graph if str(k).startswith("replication-")), key=priority.__getitem__)
    assert set(runs[1:3]) == {f"replication-{r}-{keys[4].removeprefix('search-')}" for r in (1, 2)}
    with pytest.raises(ValueError, match="4 pilots for 5 searches"):
        search_tasks(mix, given, settings, pilots[:4])


def test_the_cost_by_role_puts_each_run_in_the_part_it_played():
    """``Comparison.cost_by_role()``: a run counts once (it has a row per service level, the worst
    decides), a replication's bracket is its highest multiplier that held and its lowest that failed (a
    component out of its valid range fails a run whose levels held), the pilot's runs are the pilot's
    whatever their multiplier, and a run went its full length when it ran the pilot's or the search's
    duration."""
    settings = Settings(duration_s=10.0, warmup_s=2.0, replications=2, pilot_s=2.0)
    # (pilot, seed, multiplier, worst ratio, in range, run_s, ios)
    made = [
        (True, 1, 1.0, 0.4, True, 2.0, 1), (True, 1, 2.0, 3.0, True, 0.5, 2),
        (False, 1, 1.0, 0.2, True, 3.5, 10), (False, 1, 1.5, 0.8, True, 10.0, 20),
        (False, 1, 2.0, 2.5, True, 4.0, 40), (False, 1, 1.75, 1.1, True, 10.0, 80),
        (False, 2, 1.5, 0.7, True, 10.0, 100), (False, 2, 1.75, 0.9, True, 10.0, 200),
        (False, 2, 2.0, 1.5, True, 10.0, 400), (False, 2, 1.9, 0.5, False, 3.5, 800),
    ]  # fmt: skip
    rows = [
        {"architecture": "A", "bound": "fit", "pilot": p, "seed": s, "multiplier": m, "service_level": lv,
         "ratio": r if lv == "worst" else r / 2, "in_range": ok, "run_s": run_s, "ios": ios}
        for p, s, m, r, ok, run_s, ios in made for lv in ("worst", "other")
    ]  # fmt: skip
    result = Comparison(None, [], settings, [], [pl.DataFrame(rows)])
    got = {r["role"]: r for r in result.cost_by_role().iter_rows(named=True)}
    assert list(got) == list(Comparison.ROLES)
    expect = {  # role: (runs, full length, ios, full-length ios)
        "pilot": (2, 1, 3, 1),
        "walk and bisection": (4, 2, 10 + 40 + 100 + 400, 100 + 400),
        "bracket held": (2, 2, 20 + 200, 220),
        "bracket failed": (2, 1, 80 + 800, 80),
    }
    for role, (runs, full, ios, full_ios) in expect.items():
        r = got[role]
        found = (r["runs"], r["full_length"], r["ios"], r["full_length_ios"])
        assert found == (runs, full, ios, full_ios), role
    assert sum(r["ios_share"] for r in got.values()) == pytest.approx(1.0)
    assert got["bracket held"]["ios_share"] == pytest.approx(220 / 1653)


def test_a_run_gone_again_to_its_end_records_at_each_check_what_a_run_stopped_there_saw():
    """``verify.early_stop``'s full runs: with its trajectory recorded, a run ends where one without checks
    does, and what it records at a check is what a run stopped at that check measured."""
    from storagelab.kernel.simulation import simulate
    from storagelab.verify.early_stop import SIXTEENTHS, full_run

    mix = WorkloadMix.from_mapping(MIX)
    c = Candidate(
        "EqualLogic", preset="EqualLogic PS6100E", build=studies.registry.PRESETS["EqualLogic PS6100E"]
    )
    s = Settings(duration_s=2.0, warmup_s=0.5)
    recorded = full_run(mix, c, s, "fit", 3, 0.1, record=True)
    plain = full_run(mix, c, s, "fit", 3, 0.1, record=False)
    assert plain["trajectory"] == [] and recorded["full_worst"] == plain["full_worst"]
    steps = pl.DataFrame(recorded["trajectory"])
    levels = mix.service_levels(c.placement_on(build("EqualLogic PS6100E").volumes))
    assert steps["fraction"].unique().sort().to_list() == [*SIXTEENTHS, 1.0]
    assert steps.height == len(levels) * (len(SIXTEENTHS) + 1)
    end = steps.filter(pl.col("fraction") == 1.0)
    assert end["ratio"].max() == recorded["full_worst"]
    assert recorded["full_met"] == (recorded["full_worst"] <= 1.0)

    volumes = build("EqualLogic PS6100E").volumes
    placement = c.placement_on(volumes)
    sources = mix.sources(volumes, placement, 0.1)
    at_quarter = simulate(sources[0].target, sources, duration=2.0, warmup=0.5, seed=3, progress=False,
                          stop=lambda partial: True, checks=(0.25,))  # fmt: skip
    quarter = steps.filter(pl.col("fraction") == 0.25)
    assert at_quarter.duration == pytest.approx(0.5 + 0.25 * 1.5)
    assert quarter["ratio"].to_list() == [lv.ratio(at_quarter) for lv in levels]
    assert quarter["count"].to_list() == [lv.count(at_quarter) for lv in levels]
    growing = steps.sort("fraction").group_by("service_level").agg(pl.col("count").diff().min() >= 0)
    assert quarter["count"].min() > 0 and growing["count"].all()  # each level's IOs so far, never fewer
