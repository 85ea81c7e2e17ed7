"""Control groups the lab creates for its fio jobs: a memory limit (the page cache's size) and a block
throttle, on cgroup v1 (``memory`` and ``blkio`` hierarchies) or, where those are not mounted, cgroup v2
(``memory.max`` and ``io.max``).

Safety (the issue's rule 4): only groups this module creates, each under a unique name
(``storagelab-lab-<pid>-<random>``), removed when the :func:`lab_cgroups` context ends, also on an exception,
SIGINT or SIGTERM (the handlers are restored afterwards; the signal is re-raised as
:class:`KeyboardInterrupt` or :class:`SystemExit` so the caller stops). A group is removed by moving any
process left in it to its parent and then ``rmdir`` (the kernel refuses to remove a group with members).
Where groups cannot be created, :func:`require` raises :class:`CgroupUnavailable` naming what is missing
(not root, no controller, neither cgroup version mounted).

The files read and written (Documentation/admin-guide/cgroup-v1/memory.rst, blkio-controller.rst and
cgroup-v2.rst of the kernel):

- v1: ``memory.limit_in_bytes``, ``memory.stat`` (``cache``, ``rss``, ``total_active_file``,
  ``total_inactive_file``), ``memory.max_usage_in_bytes``; ``blkio.throttle.{read,write}_{iops,bps}_device``
  (``"MAJ:MIN value"``), ``blkio.throttle.io_serviced`` and ``io_service_bytes`` (per device, ``Read`` and
  ``Write``: the bios that crossed the throttle, the group's own IOs to the device);
- v2: ``memory.max``, ``memory.stat`` (``file``, ``anon``), ``io.max`` (``"MAJ:MIN riops=.. wiops=.. rbps=..
  wbps=.."``), ``io.stat`` (``rios``, ``wios``, ``rbytes``, ``wbytes``).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Where cgroup file systems are mounted (the systemd layout: v1 hierarchies under it, v2 at it or at
#: ``unified``).
ROOT = Path("/sys/fs/cgroup")
PREFIX = "storagelab-lab"


class CgroupUnavailable(RuntimeError):
    """Control groups cannot be created here; the message names what is missing."""


@dataclass(frozen=True)
class Limits:
    """What a group enforces: ``memory_bytes`` (None: no limit) and per-device throttles on ``device``
    (``"MAJ:MIN"``): ``read_iops``, ``write_iops`` (IOs per second), ``read_bps``, ``write_bps`` (bytes per
    second); None: not throttled."""

    memory_bytes: int | None = None
    device: str | None = None
    read_iops: int | None = None
    write_iops: int | None = None
    read_bps: int | None = None
    write_bps: int | None = None

    def throttles(self) -> dict[str, int]:
        """The throttles set: name -> value."""
        keys = ("read_iops", "write_iops", "read_bps", "write_bps")
        return {k: v for k in keys if (v := getattr(self, k)) is not None}


def _mounted() -> dict[str, Path]:
    """Mounted cgroup hierarchies: ``"memory"``, ``"blkio"`` (v1) and ``"v2"`` -> their mount point."""
    out: dict[str, Path] = {}
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if len(fields) < 5 or len(rest) < 3:
            continue
        point, fstype, options = Path(fields[4]), rest[0], rest[2].split(",")
        if fstype == "cgroup":
            for c in ("memory", "blkio"):
                if c in options:
                    out.setdefault(c, point)
        elif fstype == "cgroup2":
            out.setdefault("v2", point)
    return out


def detect(need_memory: bool = True, need_io: bool = True) -> tuple[int, dict[str, Path]]:
    """The cgroup version to use (1 or 2) and the hierarchies (controller -> mount point), or
    :class:`CgroupUnavailable` naming what is missing. v1 is preferred when its ``memory`` and ``blkio``
    hierarchies are mounted (a v2 mount beside them usually has no controllers: they are bound to v1)."""
    if os.geteuid() != 0:
        raise CgroupUnavailable(
            "cgroups cannot be created: not root (creating a control group and moving fio into it needs "
            "root, or a delegated cgroup v2 subtree); run as root or skip the lab"
        )
    mounts = _mounted()
    v1_missing = [
        c for c, needed in (("memory", need_memory), ("blkio", need_io)) if needed and c not in mounts
    ]
    if not v1_missing:
        return 1, {c: mounts[c] for c in ("memory", "blkio") if c in mounts}
    if "v2" in mounts:
        v2 = mounts["v2"]
        try:
            controllers = set((v2 / "cgroup.controllers").read_text().split())
        except OSError:
            controllers = set()
        v2_missing = [
            c for c, needed in (("memory", need_memory), ("io", need_io)) if needed and c not in controllers
        ]
        if not v2_missing:
            return 2, {"v2": v2}
        raise CgroupUnavailable(
            f"cgroups cannot be created: cgroup v1 lacks the {' and '.join(v1_missing)} hierarchy, and the "
            f"cgroup v2 mount at {v2} lacks the {' and '.join(v2_missing)} controller(s) (it offers: "
            f"{', '.join(sorted(controllers)) or 'none'})"
        )
    raise CgroupUnavailable(
        f"cgroups cannot be created: neither cgroup v1 with the {' and '.join(v1_missing)} hierarchy nor a "
        "cgroup v2 file system is mounted (see /proc/self/mountinfo)"
    )


def require(need_memory: bool = True, need_io: bool = True) -> int:
    """The cgroup version to use, after creating and removing a probe group; else
    :class:`CgroupUnavailable` naming what is missing."""
    version, mounts = detect(need_memory, need_io)
    for point in mounts.values():
        probe = point / f"{PREFIX}-probe-{os.getpid()}-{secrets.token_hex(3)}"
        try:
            probe.mkdir()
        except OSError as err:
            raise CgroupUnavailable(
                f"cgroups cannot be created: mkdir {probe} failed ({err.strerror})"
            ) from None
        probe.rmdir()
    return version


def _write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError as err:
        raise CgroupUnavailable(f"cannot write {value.strip()!r} to {path}: {err.strerror}") from None


@dataclass
class Cgroup:
    """One group the lab created (on each hierarchy it needs): ``name``, cgroup ``version``, ``paths``
    (controller -> directory) and its ``limits``."""

    name: str
    version: int
    paths: dict[str, Path]
    limits: Limits
    removed: bool = field(default=False)

    @property
    def procs_files(self) -> list[Path]:
        """The ``cgroup.procs`` files a process is written to, to join the group on every hierarchy."""
        return [p / "cgroup.procs" for p in self.paths.values()]

    def _apply(self) -> None:
        lim = self.limits
        if self.version == 1:
            mem, blk = self.paths.get("memory"), self.paths.get("blkio")
            if lim.memory_bytes is not None and mem is not None:
                _write(mem / "memory.limit_in_bytes", str(lim.memory_bytes))
            if lim.throttles() and blk is not None:
                for key, value in lim.throttles().items():
                    _write(blk / f"blkio.throttle.{key}_device", f"{lim.device} {value}\n")
        else:
            v2 = self.paths["v2"]
            if lim.memory_bytes is not None:
                _write(v2 / "memory.max", str(lim.memory_bytes))
            if lim.throttles():
                names = {"read_iops": "riops", "write_iops": "wiops", "read_bps": "rbps", "write_bps": "wbps"}
                spec = " ".join(f"{names[k]}={v}" for k, v in lim.throttles().items())
                _write(v2 / "io.max", f"{lim.device} {spec}\n")

    def io_counts(self, device: str) -> dict[str, int]:
        """The group's IOs to ``device`` (``"MAJ:MIN"``) so far: ``read_ios``, ``write_ios``,
        ``read_bytes``, ``write_bytes`` (v1: the throttle layer's ``io_serviced`` and
        ``io_service_bytes``; v2: ``io.stat``)."""
        out = {"read_ios": 0, "write_ios": 0, "read_bytes": 0, "write_bytes": 0}
        if self.version == 1:
            blk = self.paths.get("blkio")
            if blk is None:
                return out
            for fname, unit in (
                ("blkio.throttle.io_serviced", "ios"),
                ("blkio.throttle.io_service_bytes", "bytes"),
            ):
                for line in (blk / fname).read_text().splitlines():
                    parts = line.split()
                    if len(parts) == 3 and parts[0] == device and parts[1] in ("Read", "Write"):
                        out[f"{parts[1].lower()}_{unit}"] = int(parts[2])
            return out
        for line in (self.paths["v2"] / "io.stat").read_text().splitlines():
            parts = line.split()
            if parts and parts[0] == device:
                kv = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
                out = {"read_ios": int(kv.get("rios", 0)), "write_ios": int(kv.get("wios", 0)),
                       "read_bytes": int(kv.get("rbytes", 0)), "write_bytes": int(kv.get("wbytes", 0))}  # fmt: skip
        return out

    def memory_stat(self) -> dict[str, int]:
        """The group's memory: ``cache`` (page cache bytes), ``rss`` (anonymous), ``active_file``,
        ``inactive_file``, ``shmem`` (fio's shared memory, counted in ``cache``), ``usage`` (everything charged:
        pages, and on v1 the kernel's own memory for the group) and ``max_usage`` (v1; on v2 ``memory.peak``
        where present), in bytes."""
        if self.version == 1:
            mem = self.paths.get("memory")
            if mem is None:
                return {}
            kv = dict(line.split() for line in (mem / "memory.stat").read_text().splitlines())
            out = {"cache": int(kv.get("cache", 0)), "rss": int(kv.get("rss", 0)),
                   "active_file": int(kv.get("total_active_file", 0)),
                   "inactive_file": int(kv.get("total_inactive_file", 0)), "shmem": int(kv.get("shmem", 0))}  # fmt: skip
            out["max_usage"] = int((mem / "memory.max_usage_in_bytes").read_text())
            out["usage"] = int((mem / "memory.usage_in_bytes").read_text())
            return out
        v2 = self.paths["v2"]
        kv = dict(line.split() for line in (v2 / "memory.stat").read_text().splitlines())
        out = {"cache": int(kv.get("file", 0)), "rss": int(kv.get("anon", 0)),
               "active_file": int(kv.get("active_file", 0)), "inactive_file": int(kv.get("inactive_file", 0)),
               "shmem": int(kv.get("shmem", 0))}  # fmt: skip
        out["usage"] = int((v2 / "memory.current").read_text())
        peak = v2 / "memory.peak"
        out["max_usage"] = int(peak.read_text()) if peak.exists() else 0
        return out

    def remove(self) -> None:
        """Move any process left to the parent group, then remove the group (retrying while the kernel
        still reports members: an exiting process leaves its group a moment after it is reaped)."""
        if self.removed:
            return
        for path in self.paths.values():
            if not path.exists():
                continue
            for _ in range(50):
                try:
                    pids = (path / "cgroup.procs").read_text().split()
                except OSError:
                    pids = []
                for pid in pids:
                    with contextlib.suppress(OSError):
                        (path.parent / "cgroup.procs").write_text(pid)
                try:
                    path.rmdir()
                    break
                except OSError:
                    time.sleep(0.1)
            else:
                raise RuntimeError(f"cgroup {path} could not be removed (members left: {pids})")
        self.removed = True


def create(limits: Limits, version: int | None = None, label: str = "") -> Cgroup:
    """A new group with ``limits``, under a unique name (``storagelab-lab-<label>-<pid>-<hex>``). The
    caller removes it (:meth:`Cgroup.remove`); :func:`lab_cgroups` does."""
    need_io = True  # the blkio / io counters are read in every experiment
    if version is None:
        version = require(limits.memory_bytes is not None, need_io)
    _, mounts = detect(limits.memory_bytes is not None, need_io)
    name = "-".join(x for x in (PREFIX, label, str(os.getpid()), secrets.token_hex(4)) if x)
    paths = {c: p / name for c, p in mounts.items()} if version == 1 else {"v2": mounts["v2"] / name}
    made: list[Path] = []
    try:
        for p in paths.values():
            p.mkdir()
            made.append(p)
        group = Cgroup(name, version, paths, limits)
        group._apply()
    except BaseException:
        for p in reversed(made):
            with contextlib.suppress(OSError):
                p.rmdir()
        raise
    return group


class _Interrupted(BaseException):
    pass


@contextlib.contextmanager
def lab_cgroups() -> Iterator[list[Cgroup]]:
    """A list the caller adds the groups it creates to; every one is removed when the block ends, on an
    exception, and on SIGINT or SIGTERM (re-raised afterwards as KeyboardInterrupt or SystemExit(143))."""
    groups: list[Cgroup] = []
    received: list[int] = []

    def handler(signum: int, _frame: Any) -> None:
        received.append(signum)
        raise KeyboardInterrupt if signum == signal.SIGINT else SystemExit(128 + signum)

    old = {}
    for s in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError):  # not the main thread: the caller's own handling applies
            old[s] = signal.signal(s, handler)
    try:
        yield groups
    finally:
        try:
            errors = []
            for g in reversed(groups):
                try:
                    g.remove()
                except RuntimeError as err:
                    errors.append(str(err))
            if errors:
                raise RuntimeError("; ".join(errors))
        finally:
            for s, h in old.items():
                signal.signal(s, h)


def leftover_groups() -> list[Path]:
    """Groups named by this module that exist now on any mounted hierarchy (none after a run)."""
    out = []
    for point in set(_mounted().values()):
        with contextlib.suppress(OSError):
            out += [p for p in point.iterdir() if p.is_dir() and p.name.startswith(PREFIX)]
    return sorted(out)


def device_of(path: str | Path) -> str:
    """``"MAJ:MIN"`` of the whole disk holding ``path`` (blk-throttle and the counters are per disk; a
    partition's counts are its disk's)."""
    st = os.stat(Path(path) if Path(path).exists() else Path(path).resolve().parent)
    sys = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    if sys.exists():
        real = sys.resolve()
        if (real / "partition").exists():
            return (real.parent / "dev").read_text().strip()
        return (real / "dev").read_text().strip()
    return f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
