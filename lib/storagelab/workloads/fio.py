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
import re
from dataclasses import dataclass
from pathlib import Path

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


class FioJobError(ValueError):
    """A fio job file the workbench cannot read; the message names the file, the job and the option."""


def fio_size(text: str) -> int:
    """A fio size in bytes (``4k`` = 4096, ``1m`` = 1,048,576; base 2, as fio's default ``kb_base``)."""
    m = _SIZE.match(str(text))
    if not m:
        raise ValueError(f"{text!r} is not a fio size (e.g. 4k, 64k, 1m, 10g)")
    power = "kmgtp".index(m.group(2).lower()) + 1 if m.group(2) else 0
    return int(float(m.group(1)) * 1024**power)


def fio_time_s(text: str) -> float:
    """A fio time in seconds (a bare number is microseconds, as for ``thinktime``)."""
    m = _TIME.match(str(text))
    if not m:
        raise ValueError(f"{text!r} is not a fio time (e.g. 500, 2ms, 1s)")
    unit = (m.group(2) or "us").lower()
    return float(m.group(1)) / {"us": 1e6, "ms": 1e3, "s": 1.0, "m": 1 / 60, "h": 1 / 3600}[unit]


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
        parser.read_string(path.read_text(encoding="utf-8"), source=str(path))
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

    try:
        rw = get("rw", "readwrite", default="read")
        if rw not in _RW:
            raise ValueError(f"rw={rw!r}; supported: {', '.join(_RW)}")
        read_pct, random_pct = _RW[rw]
        if read_pct is None:
            mixread, mixwrite = get("rwmixread"), get("rwmixwrite")
            read_pct = (
                float(mixread)
                if mixread is not None
                else 100 - float(mixwrite)
                if mixwrite is not None
                else 50.0
            )
        if get("percentage_random") is not None:
            random_pct = float(get("percentage_random"))
        if get("bssplit") is not None:
            sizes = _bssplit(get("bssplit"))
        else:
            bs = get("bs", "blocksize", default="4k")
            if "," in bs:
                raise ValueError(f"bs={bs!r}: separate read/write sizes are not supported; give one size")
            sizes = (SizeShare(size=fio_size(bs), pct=100),)
        align = fio_size(get("ba", "blockalign")) if get("ba", "blockalign") else min(s.size for s in sizes)
        locality = _locality(get("random_distribution", default="random"))
        spec = AccessSpec(name=name, sizes=sizes, read_pct=read_pct, random_pct=random_pct, align=align,
                          queue_depth=int(get("iodepth", default="1")),
                          burst_delay=fio_time_s(get("thinktime", default="0")),
                          burst_length=int(get("thinktime_blocks", default="1")))  # fmt: skip
        rate = get("rate_iops")
        if rate is not None and "," in rate:
            raise ValueError(f"rate_iops={rate!r}: separate read/write rates are not supported")
        return FioJob(
            name=name, spec=spec, numjobs=int(get("numjobs", default="1")),
            span=fio_size(get("size")) if get("size") else None, offset=fio_size(get("offset", default="0")),
            locality=locality, rate_iops=float(rate) if rate is not None else None,
        )  # fmt: skip
    except (ValueError, TypeError) as err:
        raise FioJobError(f"{where}: {err}") from None


def _bssplit(text: str) -> tuple[SizeShare, ...]:
    if "," in text:
        raise ValueError(f"bssplit={text!r}: separate read/write splits are not supported")
    parts, shares = [p for p in text.split(":") if p], []
    for p in parts:
        size, _, pct = p.partition("/")
        shares.append((fio_size(size), float(pct) if pct else None))
    given = sum(p for _, p in shares if p is not None)
    missing = [s for s, p in shares if p is None]
    rest = (100 - given) / len(missing) if missing else 0.0
    return tuple(SizeShare(size=s, pct=p if p is not None else rest) for s, p in shares)


def _locality(text: str) -> Locality:
    kind, _, arg = text.partition(":")
    if kind == "random":
        return Uniform()
    if kind == "zipf":
        return Zipf(alpha=float(arg or 1.2), blocks=1024)
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
