"""What ``storagelab measure`` may write to, and what is behind it.

By default only a regular file that the command creates itself (it records the file in its output folder,
so an interrupted plan can resume on it). Everything else is refused before the target is opened, with a
message naming the risk and the flag that accepts it:

- a block device (fio's writes destroy what is on it): ``--allow-block-device``;
- a mounted block device, or one with a mounted partition or a holder (LVM, RAID): also
  ``--allow-mounted-device`` (writing under a mounted file system corrupts it);
- an existing file the command did not create (its contents are overwritten): ``--allow-existing-file``;
- a size that does not fit the free space of the file system (with 5 % of it kept free):
  ``--allow-filling-disk``;
- anything else (a folder, a character device, a socket) is refused, always.

:func:`describe_path` reads from ``/sys`` and the mount table which device and file system a path is on.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The file in the output folder recording the test file the command created.
STATE_FILE = "target.json"


class UnsafeTarget(ValueError):
    """A target refused for safety; the message names the risk and the flag that accepts it."""


@dataclass(frozen=True)
class Allow:
    """The risks a user accepted, each by its flag."""

    block_device: bool = False
    mounted_device: bool = False
    existing_file: bool = False
    filling_disk: bool = False


def _mounts() -> list[tuple[str, str, str]]:
    """(source, mount point, file system type) of every mount, from ``/proc/self/mountinfo``."""
    out = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if len(fields) >= 5 and len(rest) >= 2:
            out.append((rest[1], fields[4].replace("\\040", " "), rest[0]))
    return out


def _sys_block(devnum: int) -> Path | None:
    p = Path(f"/sys/dev/block/{os.major(devnum)}:{os.minor(devnum)}")
    return p.resolve() if p.exists() else None


def _in_use(devnum: int) -> str:
    """Why the block device ``devnum`` is in use (mounted, a partition mounted, held), or ''."""
    mounted = {}
    for source, point, _ in _mounts():
        if source.startswith("/dev/"):
            try:
                mounted[os.stat(source).st_rdev] = (source, point)
            except OSError:
                continue
    if devnum in mounted:
        source, point = mounted[devnum]
        return f"it is mounted ({source} on {point})"
    sys = _sys_block(devnum)
    if sys is None:
        return ""
    for part in sys.iterdir():
        dev = part / "dev"
        if (part / "partition").exists() and dev.exists():
            major, minor = (int(x) for x in dev.read_text().split(":"))
            num = os.makedev(major, minor)
            if num in mounted:
                return f"its partition {part.name} is mounted ({mounted[num][0]} on {mounted[num][1]})"
    holders = sys / "holders"
    if holders.is_dir() and any(holders.iterdir()):
        return f"it is held by {', '.join(h.name for h in holders.iterdir())} (LVM, RAID or a mapper device)"
    return ""


def created_by_us(path: Path, out: Path) -> bool:
    """Whether ``out``'s state file says this command created ``path`` (the same file: same inode)."""
    try:
        state = json.loads((out / STATE_FILE).read_text())
        st = os.stat(path)
    except (OSError, ValueError):
        return False
    return (
        state.get("path") == str(path.resolve()) and state.get("inode") == st.st_ino and state.get("created")
    )


def check_target(path: str | Path, size: int, out: str | Path, allow: Allow = Allow()) -> str:
    """The kind of target ``path`` is (``"new file"``, ``"file created by storagelab"``, ``"existing
    file"`` or ``"block device"``) if it may be measured with ``size`` bytes; else :class:`UnsafeTarget`.
    Only ``os.stat`` and ``/sys`` are read: the target is not opened."""
    path, out = Path(path), Path(out)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    if st is None:
        parent = path.resolve().parent
        if not parent.is_dir():
            raise UnsafeTarget(f"{path}: folder {parent} does not exist")
        usage = shutil.disk_usage(parent)
        room = usage.free - 0.05 * usage.total
        if size > room and not allow.filling_disk:
            raise UnsafeTarget(
                f"{path}: a {size / 2**30:.2f} GiB test file does not fit the free space of {parent} "
                f"({usage.free / 2**30:.2f} GiB free, 5 % of the file system kept free); give a smaller "
                "size in the plan, or --allow-filling-disk to accept filling the file system"
            )
        return "new file"
    if stat.S_ISBLK(st.st_mode):
        if not allow.block_device:
            raise UnsafeTarget(
                f"{path} is a block device: fio's writes would destroy the data on it; refused unless "
                "--allow-block-device is given (and the plan is yours to lose the device's contents to)"
            )
        why = _in_use(st.st_rdev)
        if why and not allow.mounted_device:
            raise UnsafeTarget(
                f"{path} is a block device in use: {why}; writing to it would corrupt the file system "
                "on it. Refused unless --allow-mounted-device is given as well"
            )
        return "block device"
    if stat.S_ISREG(st.st_mode):
        if created_by_us(path, out):
            return "file created by storagelab"
        if not allow.existing_file:
            raise UnsafeTarget(
                f"{path} is an existing file that storagelab did not create (no record of it in "
                f"{out / STATE_FILE}): the plan's writes would overwrite its contents; refused unless "
                "--allow-existing-file is given"
            )
        if st.st_size < size:
            raise UnsafeTarget(f"{path}: the existing file has {st.st_size} bytes, the plan needs {size}")
        return "existing file"
    raise UnsafeTarget(f"{path} is neither a regular file nor a block device: it cannot be measured")


def create_file(path: Path, size: int, out: Path, progress: Any = None) -> None:
    """Create ``path`` (never an existing one), record it in ``out``'s state file, and fill it with
    non-zero data (so that reads reach the device: an unwritten extent reads as zeros without IO)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        st = os.fstat(fd)
        out.mkdir(parents=True, exist_ok=True)
        state = {"path": str(path.resolve()), "inode": st.st_ino, "size": size, "created": True}
        (out / STATE_FILE).write_text(json.dumps(state, indent=1) + "\n")
        block = os.urandom(1 << 20)
        left = size
        while left > 0:
            n = os.write(fd, block[: min(left, len(block))])
            left -= n
            if progress is not None:
                progress(n)
        os.fsync(fd)
    finally:
        os.close(fd)


def _read(p: Path) -> str:
    try:
        return p.read_text().strip()
    except OSError:
        return ""


def describe_path(path: str | Path) -> dict[str, Any]:
    """What is behind ``path``: the block device (name, whole disk, model, vendor, size, rotational,
    scheduler, driver, from ``/sys``) and the file system (type, mount point, source)."""
    path = Path(path)
    st = os.stat(path if path.exists() else path.resolve().parent)
    devnum = st.st_rdev if stat.S_ISBLK(st.st_mode) else st.st_dev
    info: dict[str, Any] = {"devnum": f"{os.major(devnum)}:{os.minor(devnum)}"}
    sys = _sys_block(devnum)
    if sys is not None:
        disk = sys.parent if (sys / "partition").exists() else sys
        info.update(device=sys.name, disk=disk.name, sys_path=str(disk))
        info["model"] = _read(disk / "device" / "model")
        info["vendor"] = _read(disk / "device" / "vendor")
        sectors = _read(disk / "size")
        info["size_bytes"] = int(sectors) * 512 if sectors.isdigit() else None
        info["rotational"] = _read(disk / "queue" / "rotational")
        info["scheduler"] = _read(disk / "queue" / "scheduler")
        info["logical_block_size"] = _read(disk / "queue" / "logical_block_size")
        info["nr_requests"] = _read(disk / "queue" / "nr_requests")
        driver = disk / "device" / "driver"
        info["driver"] = driver.resolve().name if driver.exists() else ""
        info["bus"] = (disk / "device" / "subsystem").resolve().name if (disk / "device").exists() else ""
    if not stat.S_ISBLK(st.st_mode):
        target = str(path.resolve())
        best = max(
            (m for m in _mounts() if target == m[1] or target.startswith(m[1].rstrip("/") + "/")),
            key=lambda m: len(m[1]),
            default=None,
        )
        if best is not None:
            info.update(fs_source=best[0], mount_point=best[1], fs_type=best[2])
    return info
