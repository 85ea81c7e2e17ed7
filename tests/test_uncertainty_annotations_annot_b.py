"""Issue 68 item 1 for the NexGen, ILIO (EqualLogic) and VPLEX (XtremIO) studies: every assumption and fit
their presets and workloads are built from carries a distribution (a fit also a prior), and a draw at
each end of every distribution builds the preset (the ends are values the parameter accepts)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest

from storagelab.architectures.topology import Topology
from storagelab.provenance import Param, parameter_draw, recording_uncertain
from storagelab.studies.ilio import claims as ilio_claims
from storagelab.studies.ilio import preset as ilio
from storagelab.studies.nexgen import claims as nexgen_claims
from storagelab.studies.nexgen import preset as nexgen
from storagelab.studies.vplex import claims as vplex_claims
from storagelab.studies.vplex import preset as vplex
from storagelab.uncertainty import Choice

#: Every preset of the three studies, and the variants whose parameters only some builds read.
BUILDS: dict[str, Callable[..., Topology]] = {
    **nexgen.PRESETS,
    "NexGen N5-150, QoS, ioTurbine, destage": lambda **o: nexgen.nexgen(
        qos=1, host_cache=1, flash_destage=1, **o
    ),
    **ilio.PRESETS,
    **vplex.PRESETS,
}


def _ends(p: Param) -> list[float | str]:
    """Every value a draw may take at the ends of ``p``'s distributions (a Choice's every value)."""
    out: list[float | str] = []
    for dist in (p.uncertainty, p.prior):
        if dist is None:
            continue
        out += list(dist.values) if isinstance(dist, Choice) else list(dist.bounds)
    return out


def _missing(params: Mapping[str, Param]) -> list[str]:
    """The assumptions without an uncertainty and the fits without an uncertainty or a prior."""
    return [
        f"{k} ({p.origin})"
        for k, p in params.items()
        if (p.origin in ("assumption", "fit") and p.uncertainty is None)
        or (p.origin == "fit" and p.prior is None)
    ]


@pytest.mark.parametrize("name", list(BUILDS))
def test_every_preset_assumption_and_fit_has_a_distribution(name: str) -> None:
    assert _missing(BUILDS[name]().params.declared()) == []


@pytest.mark.parametrize("name", list(BUILDS))
def test_a_draw_at_each_end_builds_the_preset(name: str) -> None:
    topo = BUILDS[name]()
    preset, declared = topo.params.family, topo.params.declared()
    drawn = 0
    for key, p in declared.items():
        for end in _ends(p):
            with parameter_draw({(preset, key): end}):
                built = BUILDS[name]()
            assert built.params.declared()[key].value == end, (key, end)
            drawn += 1
    assert drawn > 0


def test_a_draw_outside_the_support_is_refused() -> None:
    """The check above can fail: a value outside a parameter's distribution is refused."""
    with parameter_draw({("EqualLogic PS6100E", "iscsi_latency"): 0.9}), pytest.raises(ValueError):
        ilio.equallogic()


STUDIES = {"nexgen": nexgen_claims, "ilio": ilio_claims, "vplex": vplex_claims}


@pytest.mark.parametrize("study", list(STUDIES))
def test_every_parameter_set_assumption_and_fit_has_a_distribution(study: str) -> None:
    missing = {i: _missing(ps) for i, ps in enumerate(STUDIES[study].parameter_sets())}
    assert {i: m for i, m in missing.items() if m} == {}


@pytest.mark.parametrize("study", list(STUDIES))
def test_fitted_on_reads_the_parameter_sets(study: str) -> None:
    claims = STUDIES[study]
    fits = [
        (k, p.fitted_on) for ps in claims.parameter_sets() for k, p in dict(ps).items() if p.origin == "fit"
    ]
    assert fits and {k: rows for k, rows in claims.fitted_on().items()} == {
        k: tuple(dict.fromkeys(r for kk, rows in fits if kk == k for r in rows)) for k, _ in fits
    }


@pytest.mark.parametrize("study", list(STUDIES))
def test_a_draw_at_each_end_builds_the_parameter_sets(study: str) -> None:
    """Every uncertain parameter the study's parameter sets read (presets and workloads, as a scenario
    would discover them), drawn at each end of its distributions, builds them all."""
    claims = STUDIES[study]
    with recording_uncertain() as recorded:
        claims.parameter_sets()
    workload_keys = [key for key in recorded if key[0].endswith("workloads")]
    assert study == "vplex" or workload_keys, "the workloads read nothing through their ParamSet"
    for key, p in recorded.items():
        for end in _ends(p):
            with parameter_draw({key: end}):
                claims.parameter_sets()


def test_nexgen_workload_draws_reach_the_streams() -> None:
    from storagelab.studies.nexgen import workloads

    def rate(**draw: float) -> float:
        with parameter_draw({(workloads.WORKLOAD_SET, k.replace("__", ": ").replace("_", " ", 1)): v
                             for k, v in draw.items()}):  # fmt: skip
            w = workloads.boot_storm_workload()
        return next(s.peak_rate for s in w.streams if s.name == "vdt-a")

    declared = rate()
    assert rate(boot_storm__ios_per_boot=6000) == pytest.approx(declared * 6000 / 24_112)
    with parameter_draw({(workloads.WORKLOAD_SET, "login vsi: io_size"): 16}):
        steady = workloads.steady_workload()
        assert {s.spec.sizes[0].size for s in steady.streams if s.name.startswith("vdt")} == {16 * 1024}
        assert steady.params["vdt-a: io_size"].value == 4  # the declared value is kept
    with parameter_draw({(workloads.WORKLOAD_SET, "oltp: ios_per_order"): 19}):
        assert workloads.ios_per_order() == 19
    assert workloads.ios_per_order() == 18


def test_nexgen_published_opm_counts_the_four_vms_or_one() -> None:
    """The document does not say whether its OPM counts the four SQL VMs' orders or one VM's: declared the
    four together (18 IOs per order, OPM = IOPS x 60 / 18); drawn as one VM's, an order is a quarter of the
    IOs (whole IOs), the simulated threads think after each such order, and the figure is one VM's share."""
    from storagelab.studies.nexgen import workloads

    p = workloads.workload_params()["oltp: published_opm_vms"]
    assert p.origin == "assumption" and p.value == 4 and p.uncertainty.values == (1, 4)

    def oltp_burst() -> int:
        return next(s.think for s in workloads.steady_workload().streams if s.name == "oltp").burst_length

    assert workloads.published_opm(11_250) == pytest.approx(11_250 * 60 / 18) and oltp_burst() == 18
    for fitted, per_order in ((17, 4), (18, 4), (19, 5)):
        draw = {(workloads.WORKLOAD_SET, "oltp: published_opm_vms"): 1,
                (workloads.WORKLOAD_SET, "oltp: ios_per_order"): fitted}  # fmt: skip
        with parameter_draw(draw):
            assert workloads.ios_per_order() == per_order and oltp_burst() == per_order
            assert workloads.published_opm(11_250) == pytest.approx(11_250 * 60 / per_order / 4)


def test_ilio_workload_draws_reach_the_streams() -> None:
    from storagelab.studies.ilio import workloads

    with parameter_draw({(workloads.WORKLOAD_SET, "extra writes: timer_tick"): 1.0}):
        think = next(s.think for s in workloads.login_vsi_run(75).streams if s.name == "extra writes")
    assert think.timer_tick == pytest.approx(0.001)
    with parameter_draw({(workloads.WORKLOAD_SET, "baseline: span"): 4.55}):
        assert ilio_claims.baseline_workload().streams[0].span == int(4.55e9)
        assert ilio_claims.baseline_workload(8.0).streams[0].span == int(8e9)  # a caller's file is not drawn
    with parameter_draw({(workloads.WORKLOAD_SET, "atlantis vdi: outstanding"): 4}):
        assert ilio_claims.baseline_workload().streams[0].outstanding == 4
        assert ilio_claims.iometer_on_ilio_workload().streams[0].outstanding == 4
    with parameter_draw({(workloads.WORKLOAD_SET, "boot storm: power_on_interval"): 2.08}):
        assert ilio_claims.boot_length_s() == pytest.approx(75 * 2.08 + 12)
