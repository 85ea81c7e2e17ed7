"""The compiled per-IO path (:mod:`storagelab.kernel.native`): what it compiles, when a build is used, and
that compiled and pure-Python runs give the same results."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from storagelab.kernel import native

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "lib" / "storagelab"

#: Runs whose every summary figure must be the same compiled and pure: the Virtual SAN bench scenario
#: (all-flash: write logs, RAID-0 SSDs, a replicated cluster), its hybrid (drives ordering their queues,
#: a working-set read cache) and the bench's M/M/4 open loop and closed mirrored cluster.
SCENARIOS = """
import json, sys
from storagelab.kernel import native
from storagelab.studies.vsan.preset import vsan
from storagelab.studies.vsan.workloads import vsan_iometer
from storagelab.kernel.simulation import simulate
from storagelab.verify import benchmark as b
out = {"status": native.status()}
for configuration in ("all-flash NVMe", "hybrid Xeon E5 v3"):
    topology = vsan(configuration)
    sources = vsan_iometer(vms=32).sources(topology.volumes)
    res = simulate(sources[0].target, sources, duration=0.6, warmup=0.1, seed=3, progress=False)
    out[configuration] = [res.summary().to_dicts(), res.components().to_dicts()]
for name, row in (("mm4", b.run_storagelab_mm4(4.0, 0.5, 1)), ("closed", b.run_storagelab_closed(0.5, 0.1, 2))):
    out[name] = [row.simulated_ios, row.mean_response_ms]
print(json.dumps(out, sort_keys=True, default=repr))
"""


def _run(code: str, **env: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, **env}, cwd=ROOT)  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_compiled_modules_are_the_type_checked_ones():
    """mypy checks what mypyc compiles: an annotation compiled code enforces has been checked."""
    checked = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]["files"]
    assert sorted(checked) == sorted(f"lib/storagelab/{m}" for m in native.MODULES)


def test_a_build_is_used_only_for_the_sources_and_the_python_it_was_built_from(tmp_path):
    package, build = tmp_path / "storagelab", tmp_path / "build"
    for m in native.MODULES:
        (package / m).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(PACKAGE / m, package / m)
    assert native.check(build, package) == "not built"
    build.mkdir()
    (build / native.MANIFEST_FILE).write_text(json.dumps(native.manifest(package)))
    assert native.check(build, package) is None
    station = package / "kernel" / "station.py"
    station.write_text(station.read_text() + "\n# an edit after the build\n")
    assert native.check(build, package) == "stale: kernel/station.py changed since the build"
    (build / native.MANIFEST_FILE).write_text(
        json.dumps({**native.manifest(package), "python": "cpython-39"})
    )
    assert native.check(build, package).startswith("built for another Python (cpython-39")


def test_the_variable_runs_pure_python_whatever_is_built():
    code = ("import json, storagelab.kernel.station as s, storagelab.components.cluster as c\n"
            "from storagelab.kernel import native\n"
            "print(json.dumps([native.status(), s.__file__, c.__file__]))")  # fmt: skip
    status, station, cluster = _run(code, STORAGELAB_PURE_PYTHON="1")
    assert status == "pure Python (STORAGELAB_PURE_PYTHON is set)"
    assert station.endswith("kernel/station.py") and cluster.endswith("components/cluster.py")


@pytest.mark.skipif(
    not native.status().startswith("compiled"),
    reason=f"per-IO modules not compiled here ({native.status()}): make native builds them",
)
def test_compiled_and_pure_python_runs_are_the_same():
    import storagelab.kernel.station as station

    assert station.__file__.endswith(".so")  # this process runs the build
    compiled = _run(SCENARIOS)
    pure = _run(SCENARIOS, STORAGELAB_PURE_PYTHON="1")
    assert compiled.pop("status").startswith("compiled") and pure.pop("status").startswith("pure Python")
    assert compiled == pure
    assert compiled["all-flash NVMe"][0][0]["count"] > 5_000  # the runs did simulate something
