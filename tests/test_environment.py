"""The pinned environment: pyproject, the lock file and environment.yml agree."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "ci"))
import make_environment_yml  # noqa: E402


def lock_pins() -> dict[str, str]:
    return {canonicalize_name(n): v for n, v in make_environment_yml.pins(ROOT / "requirements.lock")}


def test_every_declared_dependency_is_pinned_in_the_lock():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = project["dependencies"] + project["optional-dependencies"]["dev"]
    pins = lock_pins()
    missing = [r for r in declared if canonicalize_name(Requirement(r).name) not in pins]
    assert missing == []
    for r in map(Requirement, declared):  # the pins satisfy the declared ranges
        assert r.specifier.contains(pins[canonicalize_name(r.name)]), r


def test_lock_pins_every_line_with_hashes():
    text = (ROOT / "requirements.lock").read_text()
    blocks = re.split(r"\n(?=[A-Za-z0-9])", text)
    pinned = [b for b in blocks if re.match(r"^[A-Za-z0-9_.\-\[\]]+==", b)]
    assert len(pinned) == len(lock_pins()) > 50
    assert all("--hash=sha256:" in b for b in pinned)


def test_environment_yml_is_generated_from_the_lock():
    expected = make_environment_yml.render(make_environment_yml.pins(ROOT / "requirements.lock"))
    assert (ROOT / "environment.yml").read_text() == expected, (
        "run: make lock (or python ci/make_environment_yml.py)"
    )
    assert "  - python=3.11\n" in expected


def test_running_interpreter_is_the_pinned_python():
    assert sys.version_info[:2] == (3, 11)
    from importlib.metadata import version

    for name in ("altair", "polars", "statsmodels", "papermill", "nbval", "vl-convert-python"):
        assert version(name) == lock_pins()[canonicalize_name(name)], name
