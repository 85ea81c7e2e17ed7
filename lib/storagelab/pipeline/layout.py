"""Where a storagelab project keeps its notebooks, parameters, datasets and reports."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ProjectLayout:
    """The folders of a storagelab checkout (see DESIGN: each kind of thing has one home)."""

    root: Path

    @classmethod
    def discover(cls, start: Path | None = None) -> ProjectLayout:
        """The project containing ``start`` (default: ``$STORAGELAB_ROOT``, else the working directory,
        else the checkout this package was installed from in editable mode)."""
        env = os.environ.get("STORAGELAB_ROOT")
        candidates = [Path(env)] if env else []
        here = (start or Path.cwd()).resolve()
        candidates += [here, *here.parents, Path(__file__).resolve().parents[3]]
        for c in candidates:
            if (c / "notebooks").is_dir() and (c / "params").is_dir():
                return cls(c)
        raise FileNotFoundError(
            f"no storagelab project (a folder with notebooks/ and params/) at or above {here}; "
            "run from a checkout or set STORAGELAB_ROOT"
        )

    @property
    def notebooks(self) -> Path:
        return self.root / "notebooks"

    @property
    def params(self) -> Path:
        return self.root / "params"

    @property
    def reports(self) -> Path:
        return self.root / "reports"

    def notebook_paths(self) -> list[Path]:
        """Every notebook in ``notebooks/``, in name order (the order the report runs them)."""
        return sorted(self.notebooks.glob("*.ipynb"))

    def default_params(self, notebook: Path) -> Path:
        """The defaults file of a notebook: ``params/<notebook stem>.yaml``."""
        return self.params / f"{notebook.stem}.yaml"
