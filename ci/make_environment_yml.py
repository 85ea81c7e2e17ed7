"""Write environment.yml from requirements.lock, so conda users get exactly the pinned pip environment.

Run by `make lock` after re-resolving the pins; tests/test_environment.py checks the two agree.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^([A-Za-z0-9_.\-\[\]]+)==([^\s;\\]+)")


def pins(lock: Path) -> list[tuple[str, str]]:
    """(name, version) for every pinned line of a pip-compile style lock file."""
    return [(m[1], m[2]) for line in lock.read_text().splitlines() if (m := PIN.match(line))]


def render(pinned: list[tuple[str, str]]) -> str:
    lines = [
        "# Generated from requirements.lock by ci/make_environment_yml.py (make lock); do not edit by hand.",
        "# conda env create -f environment.yml && conda activate storagelab",
        "name: storagelab",
        "channels:",
        "  - conda-forge",
        "dependencies:",
        "  - python=3.11",
        "  - pip",
        "  - pip:",
        *[f"      - {name}=={version}" for name, version in pinned],
        "      - -e .",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    (ROOT / "environment.yml").write_text(render(pins(ROOT / "requirements.lock")))
    print("wrote environment.yml")
