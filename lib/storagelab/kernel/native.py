"""The compiled per-IO path: the modules every simulated IO crosses, compiled to C extensions by mypyc.

:data:`MODULES` are the kernel's event loop and event queue, paths, stations, stages, sources and queue
disciplines, the components of a replicated cluster (the Virtual SAN bench scenario's path), the flash model
every SSD station calls per IO and the disk model every HDD station calls per IO (with its command queue's
choice of the next command, a loop over up to 32 queued commands per dispatch): type-checked in CI
(``[tool.mypy] files`` in ``pyproject.toml`` lists the same files; a test checks it), so their annotations say
what they hold, which compiled code checks at run time. :func:`build` compiles them (``storagelab compile``;
``make`` does it when their sources change) into a folder of the environment (:func:`build_dir`), never into
the source tree, with a manifest of the sources' SHA-256. When ``storagelab.kernel``,
``storagelab.components`` and ``storagelab.devices`` are imported, :func:`activate` puts that folder first on
their ``__path__`` if the manifest matches the sources there and this interpreter, so the compiled modules are
imported instead of the ``.py`` files:

- the same results: the compiled modules are the same source, run in the same order with the same floats
  (a test runs scenarios both ways and compares every IO count and mean; CI runs the whole suite, the
  committed calibration and every notebook's committed outputs with them);
- a source edited after a build is never run stale: any difference in any of the files (or another Python)
  and every module runs as pure Python, with a warning naming the file, until the next build;
- ``STORAGELAB_PURE_PYTHON=1`` runs pure Python whatever is built; :func:`status` says which runs.

All or none: the modules are compiled as one group that calls across modules natively, so one stale
file disables the whole build.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import warnings
from pathlib import Path
from types import ModuleType

#: The modules compiled, as paths under the ``storagelab`` package.
MODULES: tuple[str, ...] = (
    "kernel/event_loop.py",
    "kernel/event_queue.py",
    "kernel/composition.py",
    "kernel/station.py",
    "kernel/stages.py",
    "kernel/component.py",
    "kernel/io.py",
    "kernel/sources.py",
    "kernel/metrics.py",
    "kernel/disciplines.py",
    "components/cluster.py",
    "components/raid_set.py",
    "components/write_log.py",
    "components/cache.py",
    "components/tiering.py",
    "components/extent.py",
    "devices/flash.py",
    "devices/hdd.py",
)

#: The compile group's name: its shared library is ``storagelab_native__mypyc``.
GROUP = "storagelab_native"

#: Set (to anything but ``""`` or ``"0"``) to run pure Python whatever is built.
PURE_PYTHON_VARIABLE = "STORAGELAB_PURE_PYTHON"

_PACKAGE = Path(__file__).resolve().parent.parent  # the storagelab package folder
MANIFEST_FILE = "manifest.json"
_state: tuple[str, Path | None] | None = None  # (status, folder to import from), decided once per process


def build_dir() -> Path:
    """The folder the compiled modules are built into and imported from: in this environment (its
    ``sys.prefix``), as they are compiled for its interpreter."""
    return Path(sys.prefix) / "storagelab-native"


def _python() -> str:
    return f"{sys.implementation.cache_tag} {sysconfig.get_platform()} {sys.version.split()[0]}"


def _digests(package: Path = _PACKAGE) -> dict[str, str]:
    return {m: hashlib.sha256((package / m).read_bytes()).hexdigest() for m in MODULES}


def manifest(package: Path = _PACKAGE) -> dict[str, object]:
    """What a build of the sources in ``package`` records: this interpreter and each module's SHA-256."""
    return {"python": _python(), "sources": _digests(package)}


def check(folder: Path, package: Path = _PACKAGE) -> str | None:
    """Why the build in ``folder`` cannot be used for the sources in ``package`` (None if it can)."""
    try:
        manifest = json.loads((folder / MANIFEST_FILE).read_text())
    except (OSError, ValueError):
        return "not built"
    if manifest.get("python") != _python():
        return f"built for another Python ({manifest.get('python')}, this is {_python()})"
    built = manifest.get("sources", {})
    changed = [m for m, digest in _digests(package).items() if built.get(m) != digest]
    if changed:
        return f"stale: {', '.join(changed)} changed since the build"
    return None


def _decide() -> tuple[str, Path | None]:
    if os.environ.get(PURE_PYTHON_VARIABLE, "") not in ("", "0"):
        return f"pure Python ({PURE_PYTHON_VARIABLE} is set)", None
    folder = build_dir()
    why = check(folder)
    if why is None:
        return f"compiled ({folder})", folder
    if why != "not built":
        warnings.warn(
            f"storagelab: the compiled per-IO modules in {folder} cannot be used ({why}); running them as "
            "pure Python (same results, slower). Rebuild them with: storagelab compile",
            RuntimeWarning,
            stacklevel=3,
        )
    return f"pure Python ({why})", None


def activate(package: ModuleType) -> None:
    """Import ``package``'s compiled modules (``storagelab.kernel``, ``storagelab.components`` or
    ``storagelab.devices``) from the build, if it can be used: called first thing by each of the three
    packages."""
    global _state
    if _state is None:
        _state = _decide()
        folder = _state[1]
        if folder is not None:
            # the group's shared library, which every compiled module's stub imports by name
            lib = next(folder.glob(f"{GROUP}__mypyc.*"))
            spec = importlib.util.spec_from_file_location(f"{GROUP}__mypyc", lib)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
    folder = _state[1]
    if folder is not None:
        package.__path__.insert(0, str(folder / "storagelab" / package.__name__.split(".")[-1]))


def status() -> str:
    """Which per-IO modules this process runs: ``compiled (folder)`` or ``pure Python (why)``."""
    return _state[0] if _state is not None else _decide()[0]


def toolchain() -> str | None:
    """Why this machine cannot compile the modules (None if it can): a C compiler and Python's headers."""
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        return f"no C compiler ({cc!r} not found)"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file():
        return f"no Python headers (Python.h not in {sysconfig.get_paths()['include']})"
    try:
        import mypyc  # noqa: F401
    except ImportError:
        return "mypyc is not installed (it comes with mypy, in the lock file)"
    return None


def build(folder: Path | None = None) -> Path:
    """Compile :data:`MODULES` into ``folder`` (default :func:`build_dir`), replacing what it held only once
    the new build is complete. Takes a few minutes (a C compiler on every module). Returns the folder."""
    folder = folder or build_dir()
    why = toolchain()
    if why is not None:
        raise RuntimeError(f"cannot compile the per-IO modules: {why}")
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="storagelab-native-") as scratch:
        out, work = Path(scratch) / "out", Path(scratch) / "work"
        record = manifest()  # the sources as they are when the build starts
        script = (
            "import sys\n"
            "from setuptools import setup\n"
            "from mypyc.build import mypycify\n"
            "paths, out, work = sys.argv[1:-2], sys.argv[-2], sys.argv[-1]\n"
            "ext = mypycify(['--follow-imports=silent', '--ignore-missing-imports', *paths],\n"
            f"               group_name={GROUP!r}, target_dir=work, multi_file=True)\n"
            "setup(name='storagelab-native', ext_modules=ext, script_args=['build_ext', '--build-lib', out,\n"
            "      '--build-temp', work, '--parallel', str(max(1, len(__import__('os').sched_getaffinity(0))))])\n"
        )
        paths = [str(_PACKAGE / m) for m in MODULES]
        done = subprocess.run(
            [sys.executable, "-c", script, *paths, str(out), str(work)],
            cwd=scratch,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"mypyc failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
        if manifest() != record:
            raise RuntimeError("the sources changed while they were compiled; run storagelab compile again")
        (out / MANIFEST_FILE).write_text(json.dumps(record, indent=1) + "\n")
        if folder.exists():
            shutil.rmtree(folder)
        shutil.move(str(out), folder)
    return folder
