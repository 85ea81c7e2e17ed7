"""Notebook parameters: one schema per notebook (:mod:`storagelab.pipeline.schemas`), validated before
anything runs.

Each notebook ``notebooks/<stem>.ipynb`` has a defaults file ``params/<stem>.yaml`` and a schema,
registered in :data:`~storagelab.pipeline.schemas.SCHEMAS`. A params file is read with ``yaml.safe_load``
and checked against the schema: an unknown key, a wrong type, an out-of-range value or a missing file
raises :class:`ParamsError`, whose message names the file, the key and what is allowed.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from storagelab.input_files import InputFileError, problems, read_yaml
from storagelab.pipeline.schemas import SCHEMAS, NotebookParams


class ParamsError(InputFileError):
    """A params file that cannot be used; the message names the file, the key and what is allowed."""


def schema_for(notebook: str | Path) -> type[NotebookParams]:
    """The parameter schema of a notebook (by path or stem)."""
    stem = Path(notebook).stem
    try:
        return SCHEMAS[stem]
    except KeyError:
        raise ParamsError(
            f"notebook {stem!r} has no parameter schema; known notebooks: {', '.join(SCHEMAS)}"
        ) from None


_BOUND_WORDS = {
    "gt": ">",
    "ge": ">=",
    "lt": "<",
    "le": "<=",
    "min_length": "at least",
    "max_length": "at most",
}


def _allowed(schema: type[NotebookParams], key: str) -> str:
    """What a key accepts, for error messages: its type, bounds and meaning."""
    field = schema.model_fields.get(key)
    if field is None:
        return f"allowed keys: {', '.join(schema.model_fields)}"
    bounds = [
        f"{_BOUND_WORDS.get(f.name, f.name)} {getattr(m, f.name)}"
        for m in field.metadata
        if dataclasses.is_dataclass(m)
        for f in dataclasses.fields(m)
    ]
    kind = getattr(field.annotation, "__name__", None) or str(field.annotation).replace("typing.", "")
    if str(field.annotation).startswith(("list", "typing.Literal")):
        kind = str(field.annotation).replace("typing.", "")
    text = f"expected {kind}" + (f" ({', '.join(bounds)})" if bounds else "")
    return text + (f"; {field.description}" if field.description else "")


def validate_params(schema: type[NotebookParams], values: dict[str, Any], source: str) -> dict[str, Any]:
    """Check ``values`` against ``schema``; return the full parameter set (defaults filled in)."""
    try:
        model = schema.model_validate(values)
    except ValidationError as err:
        lines = []
        for p in problems(err):
            if p.loc:
                lines.append(f"  key {p.key!r}: {p.message}{p.given}; {_allowed(schema, str(p.loc[0]))}")
            else:  # a rule across keys
                lines.append(f"  {p.message}")
        raise ParamsError(f"{source}: invalid parameters\n" + "\n".join(lines)) from None
    return model.model_dump(mode="json")


def read_params_file(path: Path) -> dict[str, Any]:
    """Read a YAML params file safely; it must hold a mapping of parameter names to values."""
    data = read_yaml(path, ParamsError, "params file not found")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ParamsError(
            f"{path}: must be a mapping of parameter names to values, got {type(data).__name__}"
        )
    return data


def load_params(notebook: str | Path, path: Path) -> dict[str, Any]:
    """Read and validate the params file ``path`` for ``notebook``; return the complete parameters."""
    return validate_params(schema_for(notebook), read_params_file(path), str(path))
