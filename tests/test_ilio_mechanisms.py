"""The ILIO study's mechanisms as the document states them (issue 66 item 7, issue 67's Login VSI span):
the Login VSI run's change disks follow its desktops; a published peak is scored against the simulated
peak over the study's sampling interval; the 5 % unique share is a share of the written IO, not of the
capacity; the Tier-2 user data and infrastructure IO (4.1) reach the EqualLogic without ILIO, at a rate
per running desktop that is an assumption read through the workloads' ParamSet."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from storagelab.architectures.topology import Topology
from storagelab.studies.ilio import claims
from storagelab.studies.ilio.workloads import DESKTOP_DISK, DESKTOPS, TIER2_STREAM, login_vsi_run
from storagelab.workloads.catalogue.vdi import SPAN_PER_DESKTOP


class _Captured(Exception):
    """Raised by the patched ``Topology.run`` with the workload a scenario handed it."""

    def __init__(self, workload: object, kwargs: dict) -> None:
        super().__init__("captured")
        self.workload, self.kwargs = workload, kwargs


def _capture(monkeypatch: pytest.MonkeyPatch) -> None:
    def run(self: Topology, workload: object, **kwargs: object) -> None:
        raise _Captured(workload, kwargs)

    monkeypatch.setattr(Topology, "run", run)


def _scenario(title_part: str):
    return next(s for s in claims.scenarios() if title_part in s.name)


@settings(max_examples=40, deadline=None)
@given(desktops=st.integers(min_value=1, max_value=2_000), extra=st.booleans())
def test_the_login_vsi_run_spans_four_gb_of_change_disk_per_desktop(desktops, extra):
    """Login VSI's IOs address n x 4 GB (each session's change disk) and the extra Iometer writes n x
    32 GB, whatever n is."""
    w = login_vsi_run(desktops, extra_writes=extra)
    spans = {s.name: s.span for s in w.streams}
    assert spans["login vsi"] == desktops * SPAN_PER_DESKTOP
    assert spans[TIER2_STREAM] == desktops * SPAN_PER_DESKTOP
    if extra:
        assert spans["extra writes"] == desktops * DESKTOP_DISK
    else:
        assert set(spans) == {"login vsi", TIER2_STREAM}


def test_the_scored_login_vsi_scenario_runs_the_studys_75_change_disks(monkeypatch):
    """The workload the calibration's Login VSI scenario simulates spans 75 x 4 GB (the study's 75
    sessions), not the 600 x 4 GB of the NexGen study's desktops."""
    _capture(monkeypatch)
    with pytest.raises(_Captured) as got:
        _scenario("Login VSI").run(1, True)
    spans = {s.name: s.span for s in got.value.workload.streams}
    assert spans["login vsi"] == DESKTOPS * SPAN_PER_DESKTOP


@settings(max_examples=60, deadline=None)
@given(
    counts=st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=30),
    interval=st.sampled_from([20.0, 60.0, 300.0]),
)
def test_the_peak_is_the_busiest_sample_not_the_mean(counts, interval):
    """Over samples of ``interval`` s, the peak is the largest sample's rate: at least the mean, equal to
    it only when every sample is the same."""
    import polars as pl

    per_bin = pl.DataFrame({"start_s": [i * interval for i in range(len(counts))], "ios": counts})
    peak = claims.peak_over_samples(per_bin, interval)
    assert peak == pytest.approx(max(counts) / interval)
    mean = sum(counts) / (len(counts) * interval)
    assert peak >= mean - 1e-9
    if len(set(counts)) > 1:
        assert peak > mean


def test_the_login_vsi_peaks_are_taken_over_whole_five_minute_samples(monkeypatch):
    """The scored Login VSI run measures whole samples of the study's 5-minute interval (one in a quick
    run, the 15 minutes at full load in a long one), so that its peak is a sample's, not a short run's mean."""
    assert claims.sampling_interval_s() == 300.0
    _capture(monkeypatch)
    for quick, samples in ((True, 1), (False, 3)):
        with pytest.raises(_Captured) as got:
            _scenario("Login VSI").run(1, quick)
        kwargs = got.value.kwargs
        assert kwargs["duration"] - kwargs["warmup"] == pytest.approx(samples * 300.0)


@settings(max_examples=30, deadline=None)
@given(unique=st.floats(0.0, 100.0), other=st.floats(0.0, 100.0))
def test_the_unique_share_of_the_io_does_not_set_the_capacity(unique, other):
    """'about 5% of the IO ... is unique' is a share of the IO: the capacity per desktop follows from the
    share of a desktop's data that is its own (ilio_diverged_share), whatever the IO's unique share."""
    from storagelab.studies.ilio.analysis import capacity_per_desktop

    a = capacity_per_desktop([3.0], [500], ilio_unique_share=unique)["capacity_per_desktop_gb"][0]
    b = capacity_per_desktop([3.0], [500], ilio_unique_share=other)["capacity_per_desktop_gb"][0]
    assert a == b == pytest.approx(16.2 / 2 * (0.97 / 500 + 0.03))


def test_the_preset_applies_the_five_percent_to_writes_and_its_own_share_to_the_capacity():
    """The ILIO preset's content model: 5 % of written blocks are new content; the share of a desktop's
    blocks that are its own is the RAM-derived ilio_diverged_share, and the image is the rest of the 16.2 GB
    a desktop holds (not 16.2 GB)."""
    from storagelab.studies.ilio.preset import DIVERGED_SHARE_PCT, equallogic

    topo = equallogic(ilio=True)
    content = topo.roles["ILIO"][0].content_model
    assert content.unique_share == pytest.approx(0.05)
    assert content.diverged == pytest.approx(DIVERGED_SHARE_PCT / 100) != content.unique_share
    assert content.image_bytes == int(16.2e9 * (1 - DIVERGED_SHARE_PCT / 100)) < 16.2e9
    assert topo.param("ilio_diverged_share").origin == "assumption"


@settings(max_examples=20, deadline=None)
@given(unique=st.floats(0.0, 1.0), diverged=st.floats(0.0, 1.0), seed=st.integers(0, 2**16))
def test_a_content_model_draws_writes_by_the_io_share_and_diverged_blocks_by_the_capacity_share(
    unique, diverged, seed
):
    """Writes bring new content at the unique share (of the IO); an unwritten block is the volume's own at
    the diverged share (of the capacity): the two are independent."""
    import numpy as np

    from storagelab.workloads.content import DIVERGED_BASE, UNIQUE_BASE, ContentModel

    contents = ContentModel(unique_share=unique, diverged_share=diverged, image_bytes=4096 * 4096).bind(
        np.random.default_rng(seed)
    )
    n = 4000
    own = sum(contents.read(1, b) >= DIVERGED_BASE for b in range(n)) / n
    new = sum(UNIQUE_BASE <= contents.write(2, b) < DIVERGED_BASE for b in range(n)) / n
    assert own == pytest.approx(diverged, abs=0.04)
    assert new == pytest.approx(unique, abs=0.04)


def test_desktops_in_ram_read_nothing_from_the_array():
    """'places all primary storage in server RAM': Login VSI's reads of the desktops' own data never reach
    the EqualLogic with ilio_desktops_in_ram (the array sees only coalesced writes); without it, their
    first reads do."""
    import polars as pl

    from storagelab.studies.ilio.preset import equallogic

    reads = {}
    for in_ram in (1, 0):
        topo = equallogic(ilio=True, ilio_desktops_in_ram=in_ram)
        res = topo.run(login_vsi_run(DESKTOPS, extra_writes=False), seed=1, warmup=0.5, duration=3.0)
        stats = res.components().filter(pl.col("component") == "Atlantis ILIO 1")
        reads[in_ram] = dict(zip(stats["statistic"].to_list(), stats["value"].to_list(), strict=True))[
            "backend_reads"
        ]
    assert reads[1] == 0 < reads[0]


def _tier2_iops_of(workload: object, seconds: float = 6.0) -> tuple[float, float]:
    """Tier-1 and Tier-2 IOPS of ``workload`` on the ILIO preset over a short run (seed 1)."""
    from storagelab.studies.ilio.preset import equallogic

    topo = equallogic(ilio=True)
    res = topo.run(workload, seed=1, warmup=1.0, duration=1.0 + seconds)
    return claims.tier1_iops(res), claims.tier2_iops(res, topo)


def test_the_tier2_user_data_reach_the_equallogic_beside_ilio_s_destage():
    """4.1: 'all infrastructure management and user data executes from shared Tier 2'. With the user data,
    the Tier-2 IOPS of the Login VSI run exceed what ILIO destages alone by the desktops' user-data rate
    (75 x 2.7 IOPS), and the Tier-1 IOPS (what the desktops send to ILIO) do not count them."""
    t1_with, t2_with = _tier2_iops_of(login_vsi_run(DESKTOPS))
    t1_without, t2_without = _tier2_iops_of(login_vsi_run(DESKTOPS, user_data=False))
    assert t2_with - t2_without == pytest.approx(DESKTOPS * 2.7, rel=0.15)
    assert t2_with > 2 * t2_without
    assert t1_with == pytest.approx(t1_without, rel=0.02)


def test_the_tier2_rate_is_read_through_the_workloads_paramset():
    """A draw of 'tier 2: iops_per_desktop' reaches the stream (75 desktops x the drawn rate); outside a
    draw the declared 2.7 holds, and the Param carries its distribution and a source that names the other
    documents its range comes from (not this study's Tier-2 rows)."""
    from storagelab.provenance import parameter_draw
    from storagelab.studies.ilio import workloads

    def rate() -> float:
        return next(s.rate for s in login_vsi_run(DESKTOPS).streams if s.name == TIER2_STREAM)

    assert rate() == pytest.approx(DESKTOPS * 2.7)
    with parameter_draw({(workloads.WORKLOAD_SET, "tier 2: iops_per_desktop"): 0.5}):
        assert rate() == pytest.approx(DESKTOPS * 0.5)
        boot = next(s for s in claims.boot_storm_workload().streams if s.name == TIER2_STREAM)
        assert boot.rate == pytest.approx(DESKTOPS * 0.5)
    declared = workloads.tier2_user_data().params["iops_per_desktop"]
    assert declared.origin == "assumption" and declared.uncertainty is not None
    assert "002_3dbf0d9df4c2366f" in declared.source and "000_95d1997ae9f905ef" in declared.source
    assert "boot-t2-peak" not in declared.source.split("never from")[0]


def test_in_the_boot_storm_each_desktop_counts_from_its_power_on():
    """During the boot storm the Tier-2 user data ramp with the power-ons: none at the first, all 75
    desktops' once the last is powered on (75 x the power-on interval)."""
    stream = next(s for s in claims.boot_storm_workload().streams if s.name == TIER2_STREAM)
    last_power_on = DESKTOPS * claims.power_on_interval_s()
    assert stream.schedule.rate_scale_at(0.0) == pytest.approx(0.0)
    assert stream.schedule.rate_scale_at(last_power_on / 2) == pytest.approx(0.5)
    assert stream.schedule.rate_scale_at(last_power_on + 1.0) == pytest.approx(1.0)


def test_the_boot_storm_s_tier2_figure_is_the_mean_over_the_study_s_five_minute_sample(monkeypatch):
    """'an average of only 221 IOPS were provided by the Dell EqualLogic array (Tier 2)' over the 5 minutes
    of the Tier-1 peak: the scored run is that one sample, from the first power-on (warm-up 0, 300 s)."""
    _capture(monkeypatch)
    with pytest.raises(_Captured) as got:
        _scenario("boot storm").run(1, True)
    assert got.value.kwargs["warmup"] == 0.0
    assert got.value.kwargs["duration"] == pytest.approx(claims.sampling_interval_s())
    assert TIER2_STREAM in {s.name for s in got.value.workload.streams}
