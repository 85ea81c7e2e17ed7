"""IO traces: fio iologs (versions 2 and 3) and blkparse text output read into a :class:`Trace`, and a
source that replays one against a component with its timestamps (open loop).

A trace is four arrays in SI units: issue times (s, from the first IO), reads (bool), sizes (bytes) and
addresses (bytes). fio's version 2 iolog has no timestamps but ``wait`` lines (microseconds); version 3
stamps every line in microseconds from the start of the run. blkparse's default text output gives the
time in seconds and the sector (512 bytes) and length in sectors; the queue (``Q``) events are read by
default, as the IOs the application issued.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from storagelab.kernel.component import Component, completion_in
from storagelab.kernel.sources import Source


class TraceError(ValueError):
    """A trace file that cannot be read; the message names the file and the line."""


@dataclass(frozen=True)
class Trace:
    """IOs with issue times (s), op (``is_read``), size (bytes) and address (bytes), in issue order."""

    times: np.ndarray
    is_read: np.ndarray
    size: np.ndarray
    address: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.times)
        if not (len(self.is_read) == len(self.size) == len(self.address) == n) or n == 0:
            raise TraceError("a trace needs at least one IO and equally long arrays")
        if np.any(np.diff(self.times) < 0):
            raise TraceError("trace times must not decrease")

    def __len__(self) -> int:
        return len(self.times)

    @property
    def duration(self) -> float:
        """Seconds from the first IO to the last."""
        return float(self.times[-1] - self.times[0])

    def source(
        self, name: str, target: Component, *, cls: str | None = None, time_scale: float = 1.0
    ) -> TraceSource:
        """A source replaying this trace against ``target`` (``time_scale`` > 1 replays it faster)."""
        return TraceSource(name, target, self, cls=cls, time_scale=time_scale)


def _trace(rows: list[tuple[float, bool, int, int]], path: Path) -> Trace:
    if not rows:
        raise TraceError(f"{path}: no read or write IOs in the trace")
    t, r, s, a = (np.asarray(x) for x in zip(*rows, strict=True))
    order = np.argsort(t, kind="stable")
    t = t[order].astype(float)
    return Trace(t - t[0], r[order].astype(bool), s[order].astype(np.int64), a[order].astype(np.int64))


def read_fio_iolog(path: str | Path) -> Trace:
    """A fio iolog (``write_iolog``), version 2 (``wait`` lines) or 3 (microsecond timestamps)."""
    path = Path(path)
    if not path.is_file():
        raise TraceError(f"{path}: trace not found")
    lines = path.read_text(encoding="utf-8").splitlines()
    head = lines[0].strip() if lines else ""
    if head not in ("fio version 2 iolog", "fio version 3 iolog"):
        raise TraceError(
            f"{path}, line 1: {head!r} is not a fio iolog header ('fio version 2 iolog' or '... 3 iolog')"
        )
    v3 = head.endswith("3 iolog")
    rows, clock = [], 0.0
    for no, line in enumerate(lines[1:], start=2):
        f = line.split()
        if not f:
            continue
        try:
            if v3:
                t, f = int(f[0]) * 1e-6, f[1:]
            else:
                t = clock
            if len(f) >= 4 and f[1] in ("read", "write"):
                rows.append((t, f[1] == "read", int(f[3]), int(f[2])))
            elif not v3 and len(f) >= 3 and f[1] == "wait":
                clock += int(f[2]) * 1e-6
            elif len(f) >= 2 and f[1] in ("add", "open", "close", "sync", "datasync", "trim"):
                continue
            else:
                raise ValueError(f"unknown action in {line.strip()!r}")
        except (ValueError, IndexError) as err:
            raise TraceError(f"{path}, line {no}: {err}") from None
    return _trace(rows, path)


_BLKPARSE = re.compile(
    r"^\s*\d+,\d+\s+\d+\s+\d+\s+(?P<time>\d+\.\d+)\s+\d+\s+(?P<action>[A-Z]+)\s+(?P<rwbs>[A-Z]+)\s+"
    r"(?P<sector>\d+)\s+\+\s+(?P<sectors>\d+)"
)


def read_blkparse(path: str | Path, action: str = "Q") -> Trace:
    """blkparse's default text output (``blkparse -i dev``): the ``action`` events (``Q`` queued, ``D``
    issued to the driver, ``C`` completed) of reads and writes; summary lines are skipped."""
    path = Path(path)
    if not path.is_file():
        raise TraceError(f"{path}: trace not found")
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _BLKPARSE.match(line)
        if not m or m["action"] != action:
            continue
        op = m["rwbs"]
        if "R" not in op and "W" not in op:
            continue
        rows.append((float(m["time"]), "R" in op, int(m["sectors"]) * 512, int(m["sector"]) * 512))
    return _trace(rows, path)


class _TraceSampler:
    """The trace's IOs in order, in blocks (as sources draw them)."""

    def __init__(self, trace: Trace) -> None:
        self.trace, self.pos = trace, 0

    def bind(self, rng: np.random.Generator) -> _TraceSampler:
        return _TraceSampler(self.trace)

    def next_block(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        t, k = self.trace, np.arange(self.pos, self.pos + n) % len(self.trace)
        self.pos += n
        return t.is_read[k], t.size[k], t.address[k]


class TraceSource(Source):
    """Replays a :class:`Trace` against ``target``: each IO at its timestamp divided by ``time_scale``,
    whatever is outstanding (open loop); the source stops after the last IO."""

    def __init__(self, name: str, target: Component, trace: Trace, *, cls: str | None = None,
                 time_scale: float = 1.0) -> None:  # fmt: skip
        if not time_scale > 0:
            raise ValueError(f"trace source {name!r}: time_scale must be > 0, got {time_scale!r}")
        super().__init__(name, target, _TraceSampler(trace), cls)
        self.trace, self.time_scale = trace, time_scale

    def bind(self, ctx) -> None:
        super().bind(ctx)
        self._i = 0
        self._times = (self.trace.times / self.time_scale).tolist()
        completion_in(self.env, self._times[0], None).callbacks.append(self._arrive)

    def _arrive(self, _ev) -> None:
        times, now = self._times, self.env.now
        while self._i < len(times) and times[self._i] <= now + 1e-12:
            self._issue()
            self._i += 1
        if self._i < len(times):
            completion_in(self.env, times[self._i] - now, None).callbacks.append(self._arrive)
