"""A user's input files (params, sweep specs, workload mixes, access specs, fio job files and results,
dataset rows): YAML read safely, the one error a file the workbench cannot use raises
(:class:`InputFileError`, whose message names the file, the key and what is allowed), and the problems a
pydantic schema finds in a file, each named by its key, before any work starts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError


class InputFileError(ValueError):
    """A file a user handed the workbench that it cannot use: its message names the file, the key (or
    line, option, column) and what is allowed. Every loader's own error (``ParamsError``, ``SweepError``,
    ``AccessSpecError``, ``FioJobError``, ``FioResultError``, ``DatasetError``, ``PlanError``,
    ``WorkloadMixError``) is one of these, so the command line reports any of them as a one-line error
    without a traceback; a ``ValueError`` still, as they were."""


def read_yaml(path: str | Path, error: type[Exception], missing: str) -> Any:
    """The parsed YAML of the file at ``path`` (``None`` for an empty file). Raises ``error`` with
    ``"{path}: {missing}"`` if there is no such file, or naming the path if it cannot be read or is not
    valid YAML."""
    path = Path(path)
    if not path.is_file():
        raise error(f"{path}: {missing}")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise error(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason}); save it as UTF-8") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise error(f"{path}: not valid YAML: {exc}") from None
    except RecursionError:
        raise error(f"{path}: nested too deeply to be a YAML input file") from None


@dataclass(frozen=True)
class Problem:
    """One thing a schema refused: ``key`` (dotted path; ``"(top level)"`` for a rule across keys),
    pydantic's ``message``, and ``given`` (`` (got ...)``, or empty for a missing key)."""

    key: str
    message: str
    given: str
    loc: tuple[int | str, ...]


def problems(err: ValidationError) -> list[Problem]:
    """Each error of ``err`` as a :class:`Problem`."""
    return [
        Problem(
            key=".".join(str(p) for p in e["loc"]) or "(top level)",
            message=e["msg"],
            given="" if e["type"] == "missing" else f" (got {e['input']!r})",
            loc=tuple(e["loc"]),
        )
        for e in err.errors()
    ]


__all__ = ["InputFileError", "Problem", "problems", "read_yaml"]
