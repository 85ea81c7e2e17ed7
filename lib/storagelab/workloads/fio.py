"""fio job files in and out: a job section as an :class:`~storagelab.workloads.access_spec.AccessSpec` with
its workers, span, locality and pacing, and an access spec written as a fio job a user can run on real
hardware.

Supported job options (fio's names and meanings; sizes with fio's base-2 suffixes, ``4k`` = 4096 bytes):
``rw``/``readwrite`` (read, write, randread, randwrite, rw/readwrite, randrw), ``rwmixread``/``rwmixwrite``,
``percentage_random``, ``bs``/``blocksize``, ``bssplit``, ``ba``/``blockalign``, ``iodepth``, ``numjobs``,
``size``, ``offset``, ``random_distribution`` (``random``, ``zipf:theta``), ``rate_iops``, ``thinktime``
(microseconds, or with a unit) with ``thinktime_blocks`` (an Iometer burst: that many IOs, then the think
time). Options that do not change the IO pattern the model sees (``ioengine``,
``direct``, ``filename``, ``runtime``, logging, ...) are accepted and ignored; any other option is refused
with a message naming the file, the job and the option, before anything runs.
"""

from __future__ import annotations

import configparser
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from storagelab.input_files import InputFileError
from storagelab.workloads.access_spec import AccessSpec, SizeShare
from storagelab.workloads.locality import Locality, Uniform, Zipf

SUPPORTED = (
    "rw", "readwrite", "rwmixread", "rwmixwrite", "percentage_random", "bs", "blocksize", "bssplit", "ba",
    "blockalign", "iodepth", "numjobs", "size", "offset", "random_distribution", "rate_iops", "thinktime", "thinktime_blocks",
)  # fmt: skip
#: Options that do not change the IO pattern in the model (engine, files, run length, logs, reporting).
IGNORED = (
    "ioengine", "direct", "buffered", "filename", "directory", "name", "description", "runtime", "time_based",
    "ramp_time", "startdelay", "group_reporting", "stonewall", "wait_for", "new_group", "write_iolog",
    "write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log", "log_avg_msec", "per_job_logs",
    "unlink", "invalidate", "randrepeat", "randseed", "allrandrepeat", "norandommap", "random_generator",
    "thread", "loops", "number_ios", "fallocate", "create_on_open", "overwrite", "end_fsync", "iodepth_batch",
    "iodepth_batch_complete", "iodepth_low", "numa_cpu_nodes", "cpus_allowed", "exitall", "kb_base",
)  # fmt: skip

_RW = {  # fio rw value -> (read %, random %)
    "read": (100.0, 0.0), "write": (0.0, 0.0), "randread": (100.0, 100.0), "randwrite": (0.0, 100.0),
    "rw": (None, 0.0), "readwrite": (None, 0.0), "randrw": (None, 100.0),
}  # fmt: skip
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b)?\s*$", re.IGNORECASE)
_TIME = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(us|ms|s|m|h)?\s*$", re.IGNORECASE)


T = TypeVar("T")


class FioJobError(InputFileError):
    """A fio job file the workbench cannot read; the message names the file, the job and the option."""


def fio_size(text: str) -> int:
    """A fio size in bytes (``4k`` = 4096, ``1m`` = 1,048,576; base 2, as fio's default ``kb_base``);
    ``ValueError`` for anything else, or a size beyond 2**63 bytes."""
    m = _SIZE.match(str(text))
    if not m:
        raise ValueError(f"{text!r} is not a fio size (e.g. 4k, 64k, 1m, 10g)")
    power = "kmgtp".index(m.group(2).lower()) + 1 if m.group(2) else 0
    size = float(m.group(1)) * 1024**power
    if not size < MAX_BYTES:
        raise ValueError(f"{text!r} is beyond the largest size, 2**63 bytes")
    return int(size)


def fio_time_s(text: str) -> float:
    """A fio time in seconds (a bare number is microseconds, as for ``thinktime``); ``ValueError`` for
    anything else, or a time that is not finite."""
    m = _TIME.match(str(text))
    if not m:
        raise ValueError(f"{text!r} is not a fio time (e.g. 500, 2ms, 1s)")
    unit = (m.group(2) or "us").lower()
    seconds = float(m.group(1)) / {"us": 1e6, "ms": 1e3, "s": 1.0, "m": 1 / 60, "h": 1 / 3600}[unit]
    if not math.isfinite(seconds):
        raise ValueError(f"{text!r} is not a finite time")
    return seconds


#: The largest size or count the job file may give (bytes, IOs): 2**63, as fio's own 64-bit fields.
MAX_BYTES = 2**63


def _whole(text: str, least: int) -> int:
    """A whole number >= ``least`` written in decimal (``ValueError`` naming what is allowed)."""
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a whole number; expected a whole number >= {least}") from None
    if not least <= value < MAX_BYTES:
        raise ValueError(f"{value} is out of range; expected a whole number >= {least}")
    return value


def _number(text: str, low: float, high: float = math.inf, *, low_open: bool = False) -> float:
    """A finite number in ``[low, high]`` (``(low, high]`` with ``low_open``), ``ValueError`` otherwise."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    bracket = "(" if low_open else "["
    if not (math.isfinite(value) and (value > low if low_open else value >= low) and value <= high):
        raise ValueError(f"{text!r} is not a number in {bracket}{low:g}, {high:g}]")
    return value


@dataclass(frozen=True)
class FioJob:
    """One fio job: its access spec (sizes, read %, random %, alignment, queue depth), ``numjobs``
    workers, the ``span`` (bytes) and ``offset`` (bytes) of the file region, the ``locality`` of random
    IOs, and ``rate_iops`` per worker (open loop; None: closed loop at the queue depth). fio's think
    time is the spec's burst delay (``thinktime_blocks`` its burst length)."""

    name: str
    spec: AccessSpec
    numjobs: int
    span: int | None
    offset: int
    locality: Locality
    rate_iops: float | None


def read_fio_jobs(path: str | Path) -> list[FioJob]:
    """Every job in a fio job file (``[global]`` options apply to each)."""
    path = Path(path)
    if not path.is_file():
        raise FioJobError(f"{path}: fio job file not found")
    parser = configparser.ConfigParser(
        allow_no_value=True, interpolation=None, delimiters=("=",), comment_prefixes=("#", ";"),
        inline_comment_prefixes=(";",), strict=False, default_section="global",
    )  # fmt: skip
    parser.optionxform = str  # fio options are case-sensitive names
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise FioJobError(
            f"{path}: not UTF-8 text (byte {err.start}: {err.reason}); save it as UTF-8"
        ) from None
    try:
        parser.read_string(text, source=str(path))
    except configparser.Error as err:
        raise FioJobError(f"{path}: not a fio job file: {err}") from None
    jobs = [_job(path, name, dict(parser[name])) for name in parser.sections()]
    if not jobs:
        raise FioJobError(f"{path}: no job section (a [name] after [global])")
    return jobs


def _job(path: Path, name: str, opts: dict[str, str | None]) -> FioJob:
    where = f"{path}, job [{name}]"
    unknown = [k for k in opts if k not in SUPPORTED and k not in IGNORED]
    if unknown:
        raise FioJobError(
            f"{where}: option(s) {', '.join(unknown)} not supported; supported: {', '.join(SUPPORTED)} "
            f"(and ignored as not changing the IO pattern: {', '.join(IGNORED)})"
        )

    def get(*keys: str, default: str | None = None) -> str | None:
        for k in keys:
            if k in opts and opts[k] is not None:
                return str(opts[k]).strip()
        return default

    def read(keys: tuple[str, ...], parse: Callable[[str], T], default: str) -> T:
        """The option (the first of ``keys`` given, else ``default``) parsed; a refusal names it."""
        key = next((k for k in keys if k in opts and opts[k] is not None), keys[0])
        text = get(*keys, default=default)
        try:
            return parse(text if text is not None else default)
        except (ValueError, TypeError) as err:
            raise FioJobError(f"{where}, option {key}: {_reason(err)}") from None

    rw = get("rw", "readwrite", default="read")
    if rw not in _RW:
        raise FioJobError(f"{where}, option rw: rw={rw!r} is not supported; supported: {', '.join(_RW)}")
    read_pct, random_pct = _RW[rw]
    if read_pct is None:
        if get("rwmixread") is not None:
            read_pct = read(("rwmixread",), lambda t: _number(t, 0, 100), "50")
        elif get("rwmixwrite") is not None:
            read_pct = 100 - read(("rwmixwrite",), lambda t: _number(t, 0, 100), "50")
        else:
            read_pct = 50.0
    if get("percentage_random") is not None:
        random_pct = read(("percentage_random",), lambda t: _number(t, 0, 100), "100")
    if get("bssplit") is not None:
        sizes = read(("bssplit",), _bssplit, "")
    else:
        sizes = read(("bs", "blocksize"), _one_size, "4k")
    align = read(("ba", "blockalign"), fio_size, str(min(s.size for s in sizes)))
    locality = read(("random_distribution",), _locality, "random")
    queue_depth = read(("iodepth",), lambda t: _whole(t, 1), "1")
    burst_delay = read(("thinktime",), fio_time_s, "0")
    burst_length = read(("thinktime_blocks",), lambda t: _whole(t, 1), "1")
    try:
        spec = AccessSpec(name=name, sizes=sizes, read_pct=read_pct, random_pct=random_pct, align=align,
                          queue_depth=queue_depth, burst_delay=burst_delay, burst_length=burst_length)  # fmt: skip
    except ValidationError as err:
        options = {"sizes": "bssplit" if get("bssplit") is not None else "bs", "read_pct": "rwmixread",
                   "random_pct": "percentage_random", "align": "ba", "queue_depth": "iodepth",
                   "burst_delay": "thinktime", "burst_length": "thinktime_blocks"}  # fmt: skip
        named = sorted({options.get(str(e["loc"][0]), str(e["loc"][0])) for e in err.errors() if e["loc"]})
        raise FioJobError(f"{where}, option {', '.join(named)}: {_reason(err)}") from None
    return FioJob(
        name=name, spec=spec, numjobs=read(("numjobs",), lambda t: _whole(t, 1), "1"),
        span=read(("size",), _positive_size, "") if get("size") else None,
        offset=read(("offset",), fio_size, "0"), locality=locality,
        rate_iops=read(("rate_iops",), _rate, "") if get("rate_iops") is not None else None,
    )  # fmt: skip


def _reason(err: Exception) -> str:
    """What a refused value was, in one line (a pydantic error's messages without its links)."""
    if isinstance(err, ValidationError):
        return "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in err.errors())
    return str(err)


def _one_size(text: str) -> tuple[SizeShare, ...]:
    if "," in text:
        raise ValueError(f"{text!r}: separate read/write sizes are not supported; give one size")
    return (SizeShare(size=_positive_size(text), pct=100),)


def _positive_size(text: str) -> int:
    size = fio_size(text)
    if size <= 0:
        raise ValueError(f"{text!r}: must be more than 0 bytes")
    return size


def _rate(text: str) -> float:
    if "," in text:
        raise ValueError(f"{text!r}: separate read/write rates are not supported")
    return _number(text, 0, low_open=True)


def _bssplit(text: str) -> tuple[SizeShare, ...]:
    if "," in text:
        raise ValueError(f"bssplit={text!r}: separate read/write splits are not supported")
    parts, shares = [p for p in text.split(":") if p], []
    if not parts:
        raise ValueError(f"{text!r}: give size/percent entries, e.g. 4k/60:64k/40")
    for p in parts:
        size, _, pct = p.partition("/")
        shares.append((_positive_size(size), _number(pct, 0, 100, low_open=True) if pct else None))
    given = sum(p for _, p in shares if p is not None)
    missing = [s for s, p in shares if p is None]
    rest = (100 - given) / len(missing) if missing else 0.0
    try:
        return tuple(SizeShare(size=s, pct=p if p is not None else rest) for s, p in shares)
    except ValidationError as err:
        raise ValueError(f"{text!r}: the percentages must sum to 100 ({_reason(err)})") from None


def _locality(text: str) -> Locality:
    kind, _, arg = text.partition(":")
    if kind == "random":
        return Uniform()
    if kind == "zipf":
        return Zipf(alpha=_number(arg or "1.2", 0, low_open=True), blocks=1024)
    raise ValueError(f"random_distribution={text!r}: supported are 'random' and 'zipf:theta'")


def to_fio(spec: AccessSpec, *, filename: str = "/tmp/storagelab.fio.dat", size: int = 1 << 30,
           runtime_s: float = 60.0, numjobs: int = 1, rate_iops: float | None = None,
           ioengine: str = "libaio", direct: bool = True) -> str:  # fmt: skip
    """A fio job file running ``spec`` (one job section named after it) on ``filename``: the sizes as
    ``bssplit``, read % as ``rwmixread``, random % as ``percentage_random``, the queue depth as
    ``iodepth``; bursts become ``thinktime`` with ``thinktime_blocks``; ``norandommap`` so that fio draws
    random offsets independently, as the model does (with its random map fio shortens IOs to fill gaps).
    Run it with ``fio FILE``."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", spec.name).strip("-") or "job"
    kb = lambda b: f"{b // 1024}k" if b % 1024 == 0 else str(b)  # noqa: E731
    lines = ["[global]", f"ioengine={ioengine}", f"direct={int(direct)}", f"filename={filename}",
             f"size={size}", "time_based", f"runtime={round(runtime_s * 1e3)}ms", "norandommap", "group_reporting",
             "", f"[{name}]",
             "rw=randrw", f"rwmixread={spec.read_pct:g}", f"percentage_random={spec.random_pct:g}",
             "bssplit=" + ":".join(f"{kb(s.size)}/{s.pct:g}" for s in spec.sizes), f"ba={kb(spec.align)}",
             f"iodepth={spec.queue_depth}", f"numjobs={numjobs}"]  # fmt: skip
    if rate_iops is not None:
        lines.append(f"rate_iops={rate_iops:g}")
    if spec.burst_delay > 0:
        lines += [f"thinktime={round(spec.burst_delay * 1e6)}", f"thinktime_blocks={spec.burst_length}"]
    return "\n".join(lines) + "\n"
