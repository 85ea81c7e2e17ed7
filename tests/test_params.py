"""Notebook parameters: the defaults agree everywhere, and bad params files fail fast and clearly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from storagelab.pipeline import params as P


def parameters_cell(notebook: Path) -> dict:
    nb = json.loads(notebook.read_text())
    cell = next(c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
    scope: dict = {}
    exec("".join(cell["source"]), {}, scope)  # the parameters cell holds literals only
    return scope


def test_every_notebook_has_a_schema_and_valid_defaults(layout):
    notebooks = layout.notebook_paths()
    assert notebooks
    for nb in notebooks:
        schema = P.schema_for(nb)
        from_yaml = P.load_params(nb, layout.default_params(nb))
        # the YAML defaults, the notebook's own parameters cell and the schema's defaults are the same
        assert from_yaml == parameters_cell(nb), nb.name
        assert from_yaml == schema().model_dump(mode="json"), nb.name


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "00-published-results.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "confdence: 0.9\n",
            r"key 'confdence': Extra inputs are not permitted.*allowed keys: studies, confidence",
        ),
        ("confidence: high\n", r"key 'confidence': .*valid number.*\(got 'high'\); expected float"),
        ("confidence: 1.5\n", r"key 'confidence': Input should be less than 1 \(got 1.5\)"),
        ("max_population: 2\n", r"key 'max_population': Input should be greater than or equal to 4"),
        (
            "studies: [emc]\n",
            r"key 'studies.0': Input should be 'nexgen', 'vsan', 'ds5020', 'vplex' or 'ilio'",
        ),
        (
            "service_level_distribution: gamma\n",
            r"key 'service_level_distribution': .*'lognormal' or 'weibull'",
        ),
        ("max_population: 12.5\n", r"key 'max_population': Input should be a valid integer"),
        ("- a\n- b\n", r"must be a mapping of parameter names to values, got list"),
        ("confidence: [unclosed\n", r"not valid YAML"),
        ("x: !!python/object/apply:os.system ['echo owned']\n", r"not valid YAML"),
    ],
)
def test_bad_params_name_the_file_the_key_and_what_is_allowed(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(P.ParamsError, match=message) as err:
        P.load_params("00-published-results", path)
    assert str(path) in str(err.value)


def test_missing_file_and_unknown_notebook(tmp_path):
    with pytest.raises(P.ParamsError, match="params file not found"):
        P.load_params("00-published-results", tmp_path / "nope.yaml")
    with pytest.raises(P.ParamsError, match="notebook '99-nothing' has no parameter schema"):
        P.load_params("99-nothing", write(tmp_path, "{}\n"))


def test_partial_file_is_completed_with_defaults(tmp_path):
    values = P.load_params("00-published-results", write(tmp_path, "confidence: 0.9\nstudies: [vsan]\n"))
    assert values["confidence"] == 0.9
    assert values["studies"] == ["vsan"]
    assert values["service_level_distribution"] == "lognormal"


@pytest.mark.parametrize(
    ("notebook", "text", "message"),
    [
        ("11-vsan-scaling", "overrides: {nodes: 8}\n", r"Virtual SAN 5.5.*no parameter 'nodes'.*hosts"),
        ("11-vsan-scaling", "overrides: {hosts: 0}\n", r"parameter 'hosts'.*whole number >= 1"),
        ("12-ds5020-mixed-tiles", "overrides: {drive: 15K SATA}\n", r"parameter 'drive'.*device preset"),
        ("13-nexgen-bootstorm", "overrides: {port_rate: 5 ms}\n", r"parameter 'port_rate'.*is a time"),
        ("14-ilio-vdi", "overrides: {drives: 23}\n", r"RAID-10 needs an even number of drives, got 23"),
        ("10-calibration", "replications: 2\nperturbed_replications: 3\n", r"must not exceed replications"),
        (
            "15-vplex-replication",
            "geo: {wan_bandwith: 1 GB/s}\n",
            r"geo .*VPLEX Geo.*no parameter 'wan_bandwith'",
        ),
        (
            "15-vplex-replication",
            "overrides: {delta_cycle: 5 s}\n",
            r"VPLEX Metro.*no parameter 'delta_cycle'",
        ),
        ("15-vplex-replication", "rtts_ms: [0, 200]\n", r"rtts_ms must each be in 0..100"),
    ],
)
def test_bad_preset_overrides_are_refused_before_anything_runs(tmp_path, notebook, text, message):
    path = tmp_path / f"{notebook}.yaml"
    path.write_text(text)
    with pytest.raises(P.ParamsError, match=message) as err:
        P.load_params(notebook, path)
    assert str(path) in str(err.value)


def test_good_overrides_are_accepted(tmp_path):
    path = tmp_path / "11-vsan-scaling.yaml"
    path.write_text("overrides: {hosts: 8, core_clock: 3 GHz}\n")
    assert P.load_params("11-vsan-scaling", path)["overrides"] == {"hosts": 8, "core_clock": "3 GHz"}
