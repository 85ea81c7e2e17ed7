"""Every file a user hands the workbench, fuzzed: params YAML, workload-mix YAML, access specs, fio job
files, fio JSON results, dataset rows and sweep specs (grids).

Each test starts from a valid file of its kind and applies one generated corruption (a key set to a wrong
type, a huge, negative, NaN or infinite number; a key removed; an unknown key added; the whole document
replaced; the file truncated, re-encoded or replaced by bytes), or none. The loader must then give a result
or raise the project's bad-input error (:class:`storagelab.input_files.InputFileError`) whose message names
the file and, for a corrupted key, that key (or the key enclosing it, for a rule across keys); never another
exception, and never leave an output file behind.

Sizes: the ``ci`` profile (default) keeps the whole file well under a minute on one core; the
``thorough`` profile (``HYPOTHESIS_PROFILE=thorough``) runs thousands of inputs per kind. Each example
records ``hypothesis.event("result")`` or ``event("error")``: ``--hypothesis-show-statistics`` counts them.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import math
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from storagelab.analysis.workload_mix import WorkloadMix
from storagelab.input_files import InputFileError
from storagelab.measured.results import read_fio_json
from storagelab.measured.run import import_results
from storagelab.pipeline.params import load_params
from storagelab.pipeline.schemas import SCHEMAS
from storagelab.pipeline.sweeps import load_spec, plan
from storagelab.published.datasets import COLUMNS, read_study
from storagelab.workloads.access_spec import load_access_specs
from storagelab.workloads.fio import read_fio_jobs

ROOT = Path(__file__).resolve().parents[1]

settings.register_profile(
    "fuzz-ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "fuzz-thorough", max_examples=2000, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)  # fmt: skip
FUZZ = settings.get_profile(
    "fuzz-thorough" if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else "fuzz-ci"
)

# --- corruptions --------------------------------------------------------------------------------------

#: Values no key expects, or at its edges: wrong types, huge, negative, NaN and infinite numbers.
BAD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=12),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -1e308, -1, 0, 0.0, 10**20, -(10**20), 2**63]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.lists(st.integers(min_value=-5, max_value=5), max_size=3),
    st.dictionaries(st.sampled_from(["a", "size", "pct"]), st.integers(), max_size=2),
)
NEW_KEYS = st.from_regex(r"[a-z][a-z_]{0,9}", fullmatch=True)


def _paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (tuple of keys and indexes) into a nested document, interior nodes included."""
    out = [prefix] if prefix else []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*prefix, i))
    return out


def _at(doc: Any, path: tuple) -> Any:
    for p in path:
        doc = doc[p]
    return doc


@st.composite
def mutated(draw: st.DrawFn, base: Any) -> tuple[Any, tuple[str, ...]]:
    """``base`` with one corruption, or none; and the keys one of which a refusal must name (empty: the
    whole document was replaced, or nothing was changed)."""
    doc = copy.deepcopy(base)
    kind = draw(
        st.sampled_from(["none", "nudge", "nudge", "set", "set", "set", "delete", "extra", "replace"])
    )
    if kind == "none":
        return doc, ()
    if kind == "nudge":  # a number scaled by 1/2 to 2: mostly a different valid file, sometimes out of range
        numbers = [p for p in _paths(doc) if type(_at(doc, p)) in (int, float)]
        if not numbers:
            return doc, ()
        path = draw(st.sampled_from(numbers))
        old = _at(doc, path[:-1])[path[-1]]
        new = old * draw(st.floats(min_value=0.5, max_value=2.0))
        _at(doc, path[:-1])[path[-1]] = max(1, round(new)) if type(old) is int else new
        return doc, tuple(str(p) for p in path if isinstance(p, str))
    if kind == "replace":
        return draw(BAD_VALUES), ()
    paths = _paths(doc)
    if kind == "extra":
        parents = [()] + [p for p in paths if isinstance(_at(doc, p), dict)]
        parent = draw(st.sampled_from(parents))
        key = draw(NEW_KEYS)
        _at(doc, parent)[key] = draw(BAD_VALUES)
        return doc, (key, *(str(p) for p in parent if isinstance(p, str)))
    path = draw(st.sampled_from(paths))
    container = _at(doc, path[:-1])
    keys = tuple(str(p) for p in path if isinstance(p, str))
    if kind == "delete":
        del container[path[-1]]
    else:
        value = container[path[-1]] = draw(BAD_VALUES)
        if isinstance(value, dict):  # a mapping put in: the refusal may name one of its keys instead
            keys += tuple(value)
    return doc, keys


#: A whole file's corruption: (kind, argument); applied to the bytes of the valid file.
FILE_DAMAGE = st.one_of(
    st.tuples(st.just("truncate"), st.floats(min_value=0, max_value=1)),
    st.tuples(st.sampled_from(["utf-16", "latin-1", "cp1252"]), st.just(None)),
    st.tuples(st.just("bytes"), st.binary(max_size=64)),
)
#: No damage two times in three, for the tests that also corrupt keys.
MAYBE_DAMAGE = st.one_of(st.none(), st.none(), FILE_DAMAGE)


def _damaged(text: str, damage: tuple[str, Any]) -> bytes:
    kind, arg = damage
    if kind == "truncate":
        raw = text.encode()
        return raw[: int(len(raw) * arg)]
    if kind == "bytes":
        return arg
    return ("é " + text).encode(kind, errors="replace")  # a non-ASCII character, not UTF-8


#: Inputs run per test and outcome ("result" or "error"), written as JSON to ``$FUZZ_COUNTS`` at the end
#: of the module (for the report's counts; shrinking and replays included).
COUNTS: Counter[tuple[str, str]] = Counter()


@pytest.fixture(scope="module", autouse=True)
def _write_counts():
    yield
    if os.environ.get("FUZZ_COUNTS"):
        rows = [{"test": t, "outcome": o, "inputs": n} for (t, o), n in sorted(COUNTS.items())]
        Path(os.environ["FUZZ_COUNTS"]).write_text(json.dumps(rows, indent=1) + "\n")


def _outcome(load: Any, path: Path, keys: tuple[str, ...]) -> Any:
    """``load()``'s result, or its :class:`InputFileError` checked to name ``path`` and one of ``keys``."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "?").split("::")[-1].split(" ")[0]
    try:
        result = load()
    except InputFileError as err:
        COUNTS[test, "error"] += 1
        event("error")
        message = str(err)
        assert path.name in message, message
        if keys:
            assert any(k in message for k in keys), (keys, message)
        return None
    COUNTS[test, "result"] += 1
    event("result")
    return result


def _only(folder: Path, *names: str) -> None:
    """Nothing but ``names`` in ``folder``: no output left behind."""
    assert sorted(p.name for p in folder.iterdir()) == sorted(names)


def _yaml(doc: Any) -> str:
    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)


# --- params YAML --------------------------------------------------------------------------------------

_PARAMS = {stem: yaml.safe_load((ROOT / "params" / f"{stem}.yaml").read_text()) for stem in SCHEMAS}


@FUZZ
@given(st.sampled_from(sorted(_PARAMS)), st.data())
def test_params_files(tmp_path_factory, stem, data):
    folder = tmp_path_factory.mktemp("params")
    doc, keys = data.draw(mutated(_PARAMS[stem]))
    path = folder / f"{stem}.yaml"
    path.write_text(_yaml(doc), encoding="utf-8")
    result = _outcome(lambda: load_params(stem, path), path, keys)
    assert result is None or isinstance(result, dict)
    _only(folder, path.name)


@FUZZ
@given(st.sampled_from(sorted(_PARAMS)), FILE_DAMAGE)
def test_damaged_params_files(tmp_path_factory, stem, damage):
    folder = tmp_path_factory.mktemp("params")
    path = folder / f"{stem}.yaml"
    path.write_bytes(_damaged((ROOT / "params" / f"{stem}.yaml").read_text(), damage))
    _outcome(lambda: load_params(stem, path), path, ())
    _only(folder, path.name)


# --- workload-mix YAML --------------------------------------------------------------------------------

_MIX = _PARAMS["19-compare-architectures"]["mix"]


@FUZZ
@given(mutated(_MIX), st.booleans(), MAYBE_DAMAGE)
def test_workload_mix_files(tmp_path_factory, mutation, under_mix_key, damage):
    folder = tmp_path_factory.mktemp("mix")
    doc, keys = mutation
    path = folder / "mix.yaml"
    text = _yaml({"mix": doc} if under_mix_key else doc)
    path.write_bytes(_damaged(text, damage) if damage else text.encode())
    mix = _outcome(lambda: WorkloadMix.from_yaml(path), path, () if damage else keys)
    if mix is not None:
        assert isinstance(mix, WorkloadMix) and mix.table()
    _only(folder, path.name)


# --- access specs -------------------------------------------------------------------------------------

_SPECS = yaml.safe_load((ROOT / "tests/data/access_specs/standard_specs.yaml").read_text())


@FUZZ
@given(mutated(_SPECS), MAYBE_DAMAGE)
def test_access_spec_files(tmp_path_factory, mutation, damage):
    folder = tmp_path_factory.mktemp("specs")
    doc, keys = mutation
    path = folder / "specs.yaml"
    text = _yaml(doc)
    path.write_bytes(_damaged(text, damage) if damage else text.encode())
    specs = _outcome(lambda: load_access_specs(path), path, () if damage else keys)
    for spec in (specs or {}).values():
        assert spec.mean_size > 0 and 0 <= spec.read_pct <= 100
    _only(folder, path.name)


# --- fio job files ------------------------------------------------------------------------------------

_FIO_JOB = {
    "global": {"ioengine": "libaio", "direct": "1", "size": "1g", "runtime": "60", "time_based": None},
    "oltp": {"rw": "randrw", "rwmixread": "70", "bssplit": "4k/60:8k/30:64k/10", "iodepth": "8",
             "numjobs": "2", "random_distribution": "zipf:1.1", "rate_iops": "500", "thinktime": "2ms",
             "thinktime_blocks": "4", "offset": "0", "ba": "4k"},
    "seq": {"rw": "read", "bs": "64k", "iodepth": "4", "percentage_random": "10"},
}  # fmt: skip

#: Text no option expects, or at its edges.
BAD_FIO_VALUES = st.one_of(
    st.sampled_from(["", "-5", "0", "nan", "inf", "-inf", "9" * 400, "1e400", "abc", "4k,8k", "-1k", "1.5",
                     "zipf:nan", "zipf:-1", "zipf:", "zipf:inf", "4k/50:8k/60", "4k/nan", "4k/-10:8k/110",
                     "randrw", "1p", "99999999999999999999999p", "0k", "1us", "1h", "2**63"]),
    st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\n\r"), max_size=16),
)  # fmt: skip


def _ini(sections: dict[str, dict[str, str | None]]) -> str:
    out = []
    for name, opts in sections.items():
        out.append(f"[{name}]")
        out += [k if v is None else f"{k}={v}" for k, v in opts.items()]
        out.append("")
    return "\n".join(out)


@st.composite
def fio_job_files(draw: st.DrawFn) -> tuple[dict, tuple[str, ...]]:
    sections = copy.deepcopy(_FIO_JOB)
    kind = draw(st.sampled_from(["none", "set", "set", "set", "delete", "extra"]))
    if kind == "none":
        return sections, ()
    name = draw(st.sampled_from(sorted(sections)))
    if kind == "extra":
        key = draw(st.sampled_from(["bogus_option", "verify", "rw ", "unknown"]))
        sections[name][key] = draw(BAD_FIO_VALUES)
        return sections, (key.strip(),)
    key = draw(st.sampled_from(sorted(sections[name])))
    if kind == "delete":
        del sections[name][key]
    else:
        sections[name][key] = draw(BAD_FIO_VALUES)
    return sections, (key,)


@FUZZ
@given(fio_job_files(), MAYBE_DAMAGE)
def test_fio_job_files(tmp_path_factory, mutation, damage):
    folder = tmp_path_factory.mktemp("fio")
    sections, keys = mutation
    path = folder / "jobs.fio"
    text = _ini(sections)
    path.write_bytes(_damaged(text, damage) if damage else text.encode())
    jobs = _outcome(lambda: read_fio_jobs(path), path, () if damage else keys)
    for job in jobs or []:
        assert job.numjobs >= 1 and job.spec.mean_size > 0
        assert job.rate_iops is None or (math.isfinite(job.rate_iops) and job.rate_iops > 0)
        assert job.span is None or job.span > 0
        assert job.offset >= 0
    _only(folder, path.name)


# --- fio JSON results ---------------------------------------------------------------------------------

_SIDE = {"total_ios": 100, "runtime": 1000, "iops": 100.0, "iops_stddev": 1.0, "iops_samples": 4,
         "bw_bytes": 409600, "bw_dev": 1.0, "bw_samples": 4, "io_bytes": 409600,
         "lat_ns": {"mean": 1e6}, "clat_ns": {"mean": 9e5, "percentile": {"50.000000": 900000}}}  # fmt: skip
_FIO_RESULT = {
    "fio version": "fio-3.33",
    "global options": {"ioengine": "libaio"},
    "jobs": [{"jobname": "j", "error": 0, "job options": {"rw": "randrw", "rwmixread": "70", "bs": "4k",
                                                           "iodepth": "4", "numjobs": "2"},
              "read": _SIDE, "write": dict(_SIDE, total_ios=50)}],
}  # fmt: skip


@FUZZ
@given(mutated(_FIO_RESULT), MAYBE_DAMAGE, st.booleans())
def test_fio_json_results(tmp_path_factory, mutation, damage, write_out):
    folder = tmp_path_factory.mktemp("fiojson")
    doc, keys = mutation
    path = folder / "result.json"
    text = json.dumps(doc)  # NaN and infinity as fio would never write them, but a file may hold them
    path.write_bytes(_damaged(text, damage) if damage else text.encode())
    out = folder / "out"
    if write_out:
        rows = _outcome(lambda: import_results([path], out), path, () if damage else keys)
    else:
        rows = _outcome(lambda: read_fio_json(path), path, () if damage else keys)
    if rows is None:
        _only(folder, path.name)
    else:
        assert rows.height > 0 and all(math.isfinite(v) and v >= 0 for v in rows["value"])
        if write_out:
            assert sorted(p.name for p in out.iterdir()) == ["json", "measurements.csv", "provenance.json"]
        else:
            _only(folder, path.name)


# --- dataset rows -------------------------------------------------------------------------------------

_VSAN_ROWS = list(csv.DictReader(io.StringIO((ROOT / "datasets/vsan.csv").read_text(encoding="utf-8"))))[:4]
BAD_CELLS = st.one_of(
    st.sampled_from(["", "nan", "NaN", "inf", "-inf", "-1", "1e400", "9" * 30, "abc", "1,5", '"', "vsan",
                     "exact", "count", "measured", " "]),
    st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=12),
)  # fmt: skip


@st.composite
def dataset_files(draw: st.DrawFn) -> tuple[list[str], list[dict[str, str]], tuple[str, ...]]:
    header, rows = list(COLUMNS), copy.deepcopy(_VSAN_ROWS)
    kind = draw(st.sampled_from(["none", "cell", "cell", "cell", "drop_column", "extra_column", "dup"]))
    if kind == "none":
        return header, rows, ()
    if kind == "dup":
        rows.append(dict(rows[0]))
        return header, rows, ("row_id",)
    column = draw(st.sampled_from(header))
    if kind == "drop_column":
        header.remove(column)
        return header, rows, (column,)
    if kind == "extra_column":
        new = draw(NEW_KEYS)
        if new in header:
            return header, rows, ()
        header.append(new)
        return header, rows, (new,)
    row = draw(st.integers(min_value=0, max_value=len(rows) - 1))
    rows[row][column] = draw(BAD_CELLS)
    return header, rows, (column,)


@FUZZ
@given(dataset_files(), MAYBE_DAMAGE)
def test_dataset_rows(tmp_path_factory, mutation, damage):
    folder = tmp_path_factory.mktemp("datasets")
    header, rows, keys = mutation
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=header, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path = folder / "vsan.csv"
    path.write_bytes(_damaged(buf.getvalue(), damage) if damage else buf.getvalue().encode())
    df = _outcome(lambda: read_study("vsan", folder), path, () if damage else keys)
    if df is not None:
        assert df.height >= 1 and all(math.isfinite(v) for v in df["value"])
    _only(folder, path.name)


# --- sweep specs (grids) ------------------------------------------------------------------------------

_SWEEP = {
    "name": "mmc-grid",
    "scenario": "storagelab.pipeline.scenarios:mmc_queue",
    "fixed": {"mean_service_ms": 1.0, "duration_s": 5.0},
    "grid": {"rho": [0.5, 0.8], "servers": [1, 4]},
    "seeds": [1, 2],
}


@FUZZ
@given(mutated(_SWEEP), MAYBE_DAMAGE)
def test_sweep_specs(tmp_path_factory, mutation, damage):
    folder = tmp_path_factory.mktemp("sweep")
    doc, keys = mutation
    path = folder / "sweep.yaml"
    text = _yaml(doc)
    path.write_bytes(_damaged(text, damage) if damage else text.encode())

    def load() -> list:
        spec, source = load_spec(path)
        return plan(spec, source)

    runs = _outcome(load, path, () if damage else keys)
    assert runs is None or len(runs) >= 1
    _only(folder, path.name)


# --- the crashes fuzzing found, pinned ------------------------------------------------------------------

_SIDE_JSON = json.dumps(_SIDE)
_JOB_OPTS = '{"rw": "randread", "bs": "4k"}'


def _fio_result(read: str = _SIDE_JSON, jobs: str | None = None, extra: str = "") -> bytes:
    job = f'{{"jobname": "j", "error": 0, "job options": {_JOB_OPTS}, "read": {read}, "write": {_SIDE_JSON}}}'
    return f'{{"fio version": "fio-3.33"{extra}, "jobs": {jobs or "[" + job + "]"}}}'.encode()


def _loader(kind: str, path: Path) -> Any:
    return {
        "params": lambda: load_params("11-vsan-scaling", path),
        "specs": lambda: load_access_specs(path),
        "mix": lambda: WorkloadMix.from_yaml(path),
        "sweep": lambda: plan(*load_spec(path)),
        "fio": lambda: read_fio_jobs(path),
        "json": lambda: read_fio_json(path),
        "dataset": lambda: read_study("vsan", path.parent),
    }[kind]


_HEADER = ",".join(COLUMNS)
_ROW = next(iter((ROOT / "datasets/vsan.csv").read_text(encoding="utf-8").splitlines()[1:]))

#: (kind, file name, content, a key the message must name): each crashed, or was taken, before the fix.
CRASHES = [
    # UnicodeDecodeError (a traceback) from every YAML loader and the fio job reader
    ("params", "11-vsan-scaling.yaml", "vms: [4]\n".encode("utf-16"), ""),
    ("specs", "specs.yaml", "é: 1".encode("latin-1"), ""),
    ("fio", "j.fio", "[j]\nrw=read\n".encode("utf-16"), ""),
    # OverflowError: a size or count beyond a float
    ("fio", "j.fio", ("[j]\nsize=" + "9" * 400 + "\n").encode(), "size"),
    # taken as a job: a negative or NaN rate, no workers, an infinite think time
    ("fio", "j.fio", b"[j]\nrate_iops=-5\n", "rate_iops"),
    ("fio", "j.fio", b"[j]\nrate_iops=nan\n", "rate_iops"),
    ("fio", "j.fio", b"[j]\nnumjobs=0\n", "numjobs"),
    ("fio", "j.fio", ("[j]\nthinktime=" + "9" * 400 + "s\n").encode(), "thinktime"),
    # refused without naming the option
    ("fio", "j.fio", b"[j]\niodepth=\n", "iodepth"),
    ("fio", "j.fio", b"[j]\nbssplit=4k/nan\n", "bssplit"),
    # AttributeError / OverflowError / polars' ComputeError / a bare ValueError on fio JSON
    ("json", "r.json", _fio_result(jobs="[null]"), "jobs"),
    ("json", "r.json", _fio_result(read=_SIDE_JSON.replace('"clat_ns": {', '"clat_ns": [], "x": {')), "clat_ns"),
    ("json", "r.json", _fio_result(read=_SIDE_JSON.replace('"total_ios": 100', '"total_ios": 1e400')), "total_ios"),
    ("json", "r.json", _fio_result(read=_SIDE_JSON.replace('"total_ios": 100', '"total_ios": ' + "1" + "0" * 30)),
     "total_ios"),
    ("json", "r.json", _fio_result(extra=', "x": ' + "9" * 5000), ""),
    # taken as a result: NaN and negative IOPS
    ("json", "r.json", _fio_result(read=_SIDE_JSON.replace('"iops": 100.0', '"iops": NaN')), "iops"),
    ("json", "r.json", _fio_result(read=_SIDE_JSON.replace('"iops": 100.0', '"iops": -5')), "iops"),
    # polars' NoDataError and ComputeError from a dataset file; an infinite value taken
    ("dataset", "vsan.csv", b"", ""),
    ("dataset", "vsan.csv", (_HEADER + "\n" + ",".join(["x"] * 40) + "\n").encode(), ""),
    ("dataset", "vsan.csv", (_HEADER + "\n" + _ROW.replace(",host_count,4,", ",host_count,inf,", 1) + "\n").encode(),
     "value"),
    ("dataset", "vsan.csv", (_HEADER + "\n").encode(), "no rows"),
    ("dataset", "vsan.csv", b"x\x01\x06\x00", ""),  # OSError: polars reads a zlib header and fails to inflate  # taken: a file cut after its header
    # TypeError from a relative module name in a sweep's scenario
    ("sweep", "sweep.yaml", b"name: s\nscenario: '..x:y'\n", "scenario"),
    # a plain ValueError, not the bad-input error, from a workload mix
    ("mix", "mix.yaml", b"name: m\nclasses: 3\n", "classes"),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "name", "content", "key"), CRASHES)
def test_crashes_found_by_fuzzing_are_clear_errors(tmp_path, kind, name, content, key):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputFileError) as err:
        _loader(kind, path)()
    assert path.name in str(err.value) and key in str(err.value)
    _only(tmp_path, name)


@pytest.mark.parametrize(
    ("args", "name", "content"),
    [
        (["check-params"], "11-vsan-scaling.yaml", "vms: [4]\n".encode("utf-16")),
        (["import", "fio"], "r.json", _fio_result(jobs="[null]")),
    ],
)
def test_the_command_line_reports_a_bad_file_without_a_traceback(tmp_path, args, name, content):
    from typer.testing import CliRunner

    from storagelab.cli import app

    path = tmp_path / name
    path.write_bytes(content)
    result = CliRunner().invoke(app, [*args, str(path)])
    assert result.exit_code == 2, result.output
    assert "error:" in result.output and name in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
