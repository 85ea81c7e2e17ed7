"""Issue 68, item 1: every assumption and every fit the studies' presets and workloads are built from has a
distribution (and every fit a prior, its range without its rows), checked by
:func:`storagelab.uncertainty.unannotated`."""

from __future__ import annotations

import pytest

from storagelab.architectures.parameters import ParamSet
from storagelab.provenance import Param
from storagelab.studies import PRESETS, STUDIES, build
from storagelab.uncertainty import LogUniform, Uniform, unannotated


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_assumption_and_fit_of_a_preset_has_a_distribution(name):
    assert unannotated(build(name).params) == []


@pytest.mark.parametrize("study", list(STUDIES))
def test_every_assumption_and_fit_a_study_s_scenarios_read_has_a_distribution(study):
    sets = STUDIES[study].parameter_sets()
    assert sets, f"{study}: parameter_sets() lists nothing"
    assert [m for ps in sets for m in unannotated(ps)] == []


def test_the_check_names_an_assumption_or_a_fit_without_its_distribution():
    params = {
        "ok": Param(1.0, "ms", "assumption", "x", uncertainty=Uniform(0.5, 2.0)),
        "bare": Param(1.0, "ms", "assumption", "x"),
        "fit": Param(1.0, "ms", "fit", "y", fitted_on=("row",), uncertainty=Uniform(0.9, 1.1)),
        "fit_ok": Param(1.0, "ms", "fit", "y", fitted_on=("row",), uncertainty=Uniform(0.9, 1.1), prior=LogUniform(0.1, 10.0)),
        "doc": Param(1.0, "ms", "document", "z"),
    }  # fmt: skip
    missing = unannotated(ParamSet("synthetic", params))
    assert missing == [
        "bare: an assumption without an uncertainty",
        "fit: a fit without a prior (its range without the rows it was fitted on)",
    ]
