"""Issue 68, item 1, for the DS5020 and Virtual SAN studies and the device catalogue: every parameter whose
origin is "assumption" or "fit" carries a distribution (a fit also its prior), the ends of every
distribution build the presets and workloads, and a draw reaches what the workloads and the protocol read."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from storagelab.devices import catalogue
from storagelab.devices.hdd import SeekSpec
from storagelab.provenance import Param, parameter_draw, recording_uncertain
from storagelab.studies.ds5020 import claims as ds5020_claims
from storagelab.studies.ds5020 import preset as ds5020_preset
from storagelab.studies.ds5020 import workloads as ds5020_workloads
from storagelab.studies.vsan import claims as vsan_claims
from storagelab.studies.vsan import preset as vsan_preset
from storagelab.uncertainty import Choice

PRESETS = {**ds5020_preset.PRESETS, **vsan_preset.PRESETS}


def _declared(ps: Mapping[str, Param]) -> dict[str, Param]:
    return ps.declared() if hasattr(ps, "declared") else dict(ps)


def _lacking(params: Mapping[str, Param]) -> list[str]:
    """Names of the assumption/fit parameters without an uncertainty, and of the fits without a prior."""
    out = [k for k, p in params.items() if p.origin in ("assumption", "fit") and p.uncertainty is None]
    return out + [f"{k} (prior)" for k, p in params.items() if p.origin == "fit" and p.prior is None]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_assumption_and_fit_of_the_presets_has_a_distribution(name: str) -> None:
    assert _lacking(PRESETS[name]().params.declared()) == []


@pytest.mark.parametrize("claims", [ds5020_claims, vsan_claims], ids=["ds5020", "vsan"])
def test_every_assumption_and_fit_of_the_parameter_sets_has_a_distribution(claims: object) -> None:
    sets = claims.parameter_sets()
    assert len(sets) >= 4
    lacking = [k for ps in sets for k in _lacking(_declared(ps))]
    assert lacking == []
    # fitted_on() reads the same sets: every fit found there is in them
    fits = {k for ps in sets for k, p in _declared(ps).items() if p.origin == "fit"}
    assert set(claims.fitted_on()) == fits


def test_the_device_catalogues_assumptions_have_distributions() -> None:
    params = []
    for table in (catalogue._HDDS, catalogue._SSDS, catalogue._NVMES, catalogue._DRAMS):
        for kw in table.values():
            for v in kw.values():
                if isinstance(v, SeekSpec):
                    params += [v.single_track, v.average, v.full_stroke]
                elif isinstance(v, Param):
                    params.append(v)
    assumed = [p for p in params if p.origin in ("assumption", "fit")]
    assert len(assumed) >= 3  # the write buffer (shared by three presets) and the S3500's two rates
    assert all(p.uncertainty is not None and p.uncertainty.contains(p.value) for p in assumed)


def _ends(p: Param) -> list[object]:
    """Each end of ``p``'s distributions (every value of a Choice), prior included."""
    out: list[object] = []
    for d in (p.uncertainty, p.prior):
        if d is not None:
            out += list(d.values) if isinstance(d, Choice) else [d.ppf(0.0), d.ppf(1.0)]
    return out


@pytest.mark.parametrize("name", sorted(PRESETS))
@pytest.mark.parametrize("end", [0, -1])
def test_the_ends_of_every_distribution_build_the_preset_and_are_read(name: str, end: int) -> None:
    """All uncertain parameters drawn at once at their lowest (or highest) values, prior included: the
    preset builds and reads each drawn value."""
    declared = PRESETS[name]().params
    draw = {}
    for k, p in declared.declared().items():
        ends = _ends(p)
        if ends:
            ends = sorted(ends) if not isinstance(ends[0], str) else ends
            draw[(declared.family, k)] = ends[end]
    assert draw
    with parameter_draw(draw):
        topo = PRESETS[name]()
    for (_, k), v in draw.items():
        assert topo.params.declared()[k].value == v, k


@pytest.mark.parametrize("end", [0, -1])
def test_the_ends_of_the_workload_distributions_build_the_workloads(end: int) -> None:
    names = {ds5020_workloads.JETSTRESS_PARAMS: ("db_io_size", "thread_think")}
    names[ds5020_workloads.CACHE_READS_PARAMS] = ("io_size",)
    jet = ds5020_workloads.jetstress().params
    cache = ds5020_workloads.iometer_cache_reads().params
    draw = {}
    for preset, keys in names.items():
        params = jet if preset == ds5020_workloads.JETSTRESS_PARAMS else cache
        for k in keys:
            draw[(preset, k)] = sorted(_ends(params[k]))[end]
    with parameter_draw(draw):
        tiles = ds5020_workloads.tile_workload(1)
        reads = ds5020_workloads.cache_iops_workload()
    db = next(s for s in tiles.streams if s.name == "jetstress 1 db")
    assert db.spec.sizes[0].size == draw[(ds5020_workloads.JETSTRESS_PARAMS, "db_io_size")] * 1024
    assert db.think == pytest.approx(draw[(ds5020_workloads.JETSTRESS_PARAMS, "thread_think")] * 1e-3)
    assert reads.streams[0].spec.sizes[0].size == draw[(ds5020_workloads.CACHE_READS_PARAMS, "io_size")]
    # the stored params stay as declared
    assert tiles.params["jetstress 1: db_io_size"].value == 8


def test_the_workloads_read_as_before_outside_a_draw_and_are_recorded() -> None:
    with recording_uncertain() as seen:
        tiles = ds5020_workloads.tile_workload(4)
        reads = ds5020_workloads.cache_iops_workload()
    db = next(s for s in tiles.streams if s.name == "jetstress 4 db")
    assert db.think == ds5020_workloads.JETSTRESS_THREAD_THINK_S  # the fit's unrounded value
    assert db.spec.sizes[0].size == ds5020_workloads.EXCHANGE_2007_PAGE
    assert reads.streams[0].spec is ds5020_workloads.SEQ_READ_512
    assert set(seen) == {
        (ds5020_workloads.JETSTRESS_PARAMS, "db_io_size"),
        (ds5020_workloads.JETSTRESS_PARAMS, "thread_think"),
        (ds5020_workloads.CACHE_READS_PARAMS, "io_size"),
    }


def test_a_draw_of_the_hit_ratio_method_reaches_the_protocol() -> None:
    conf = "hybrid Xeon E5 v3"
    assert not vsan_claims._rate_is_published_iops(conf, 64)
    with parameter_draw({(vsan_claims.HIT_RATIO_PARAMS, "hit_ratio_method"): "published-rate"}):
        assert vsan_claims._rate_is_published_iops(conf, 64)
        assert not vsan_claims._rate_is_published_iops(conf, 16)  # no published IOPS at 16 VMs


def test_a_protocol_run_under_a_draw_is_not_served_from_another_draws_memo() -> None:
    conf, vms = "all-flash NVMe", 4
    vsan_claims._protocol_run.cache_clear()
    declared = vsan_claims.simulated_iops(conf, vms, 1.0)
    with parameter_draw({(vsan_preset.FAMILY, "stack_delay"): 2.0}):  # the top of the prior
        slower = vsan_claims.simulated_iops(conf, vms, 1.0)
    assert vsan_claims._protocol_run.cache_info().misses == 2
    assert slower < 0.6 * declared
    assert vsan_claims.simulated_iops(conf, vms, 1.0) == declared
