"""Executing notebooks with papermill, and keeping committed notebooks free of run-to-run noise."""

from __future__ import annotations

import os
import tempfile
import uuid
from pathlib import Path
from typing import Any

import nbformat
import papermill as pm
from jupyter_client.manager import AsyncKernelManager

#: Cell and notebook metadata that changes on every run and never belongs in a committed notebook.
VOLATILE_METADATA = ("papermill", "execution", "collapsed", "scrolled", "ExecuteTime")

#: Seconds to wait for a kernel to start (the first start on a loaded CI machine can exceed 60 s).
KERNEL_START_TIMEOUT = 180

#: Kernels talk to papermill over local IPC sockets, not TCP: nothing listens on a port, and the kernel
#: does not warn "running over TCP without encryption" into the user's terminal on every start.
KERNEL_MANAGER = "storagelab.pipeline.notebooks.IPCKernelManager"


class IPCKernelManager(AsyncKernelManager):
    """A kernel manager whose kernels use IPC (Unix domain sockets) transport, each kernel's sockets under
    a name of its own in the temporary folder (kernels started at once must not share them)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("transport", "ipc")
        kwargs.setdefault("ip", os.path.join(tempfile.gettempdir(), f"storagelab-kernel-{uuid.uuid4().hex}"))
        super().__init__(**kwargs)


def execute(
    notebook: Path,
    output: Path,
    parameters: dict[str, Any] | None = None,
    *,
    progress: bool | dict = True,
    cwd: Path | None = None,
) -> nbformat.NotebookNode:
    """Run ``notebook`` with papermill, injecting ``parameters``; write the executed copy to ``output``.

    Parameters must already be validated (see :mod:`storagelab.pipeline.params`). The kernel is the
    notebook's own (``python3``), started in the notebook's folder so relative paths behave as in Jupyter.
    """
    output.parent.mkdir(parents=True, exist_ok=True)
    return pm.execute_notebook(
        str(notebook),
        str(output),
        parameters=parameters or {},
        progress_bar=progress,
        cwd=str(cwd or notebook.parent),
        start_timeout=KERNEL_START_TIMEOUT,
        kernel_name="python3",
        kernel_manager_class=KERNEL_MANAGER,
    )


def strip_volatile_metadata(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Remove papermill/nbclient timestamps and UI state, so re-running gives an identical file."""
    for key in VOLATILE_METADATA:
        nb.metadata.pop(key, None)
    for cell in nb.cells:
        for key in VOLATILE_METADATA:
            cell.metadata.pop(key, None)
    return nb


def refresh(notebook: Path, *, progress: bool = True) -> None:
    """Re-execute ``notebook`` in place with the defaults in its parameters cell, then strip noise.

    This is how a contributor updates the outputs that nbval compares against; nothing is injected, so
    the committed notebook keeps exactly its own cells.
    """
    tmp = notebook.with_suffix(".refresh.ipynb")
    try:
        nb = execute(notebook, tmp, None, progress=progress)
        nb = strip_volatile_metadata(nb)
        nbformat.validate(nb)
        nbformat.write(nb, str(tmp))
        tmp.replace(notebook)
    finally:
        tmp.unlink(missing_ok=True)
