"""Device service-time models: hard disks, flash SSDs (SATA/SAS and NVMe) and DRAM.

A device model answers one question for a station: how long (seconds) does this IO occupy one of my
``parallelism`` servers? ``service_time(is_read, size, address, rng)`` is called when service starts;
``mean_service_time(is_read, size)`` is the analytic mean, for validation and for sizing.

Every number behind a model is a :class:`~storagelab.provenance.Param`: a value, its unit (a symbol of
:mod:`storagelab.published.units`), where it comes from (``origin``: one of the project's source studies, device
physics, a datasheet, or a fit) and the exact place (``source``). ``model.params`` lists them, so a
notebook can print the provenance of every device it simulates.

- :class:`HDD`: seek (distance-dependent, fitted to the datasheet's single-track / average / full-stroke
  seek times in the form of Ruemmler & Wilkes 1994), rotational latency uniform on one revolution,
  media transfer, command overhead; keeps the head position.
- :class:`SSD` and :class:`NVMe`: a base latency plus size / bandwidth, read/write asymmetric, served
  by ``parallelism`` internal units; optional multiplicative lognormal jitter.
- :class:`DRAM`: a fixed latency plus size / bandwidth.

Presets (``HDD.preset("15K FC/SAS")``, ``SSD.preset("SATA SSD")``, ... or :func:`preset`) build a fresh
instance each call: a disk carries state (its head), so every member of an array needs its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import numpy as np
from scipy.optimize import brentq

from storagelab.provenance import Param
from storagelab.published.units import UNITS

#: Block size of the datasheets' random-IO figures ("4 KB random" means 4,096-byte transfers).
DATASHEET_BLOCK = 4096

_BLOCK = 4096  # variates drawn per numpy call on the per-IO path


class CapacityExceeded(ValueError):
    """An IO addressed past a device's capacity: the data placed on it does not fit."""


def _param(name: str, p: object, quantity: str, low: float, high: float = math.inf) -> float:
    """Check that ``p`` is a :class:`Param` measuring ``quantity`` with SI value in [low, high]."""
    if not isinstance(p, Param):
        raise ValueError(f"{name} must be a Param(value, unit, origin, source), got {type(p).__name__}")
    q = UNITS[p.unit].quantity
    if q != quantity:
        raise ValueError(
            f"{name} must be a {quantity} (e.g. unit {_EXAMPLE_UNIT[quantity]!r}), got unit {p.unit!r}"
        )
    v = p.si
    if not low <= v <= high:
        hi = "" if math.isinf(high) else f" and <= {high:g}"
        raise ValueError(
            f"{name} must be >= {low:g}{hi} {UNITS[p.unit].si_unit} (SI), got {v:g} ({p.value} {p.unit})"
        )
    return v


_EXAMPLE_UNIT = {"time": "ms", "size": "GB", "throughput": "MB/s", "rotation_rate": "rpm", "count": "count",
                 "io_rate": "IOPS"}  # fmt: skip


def _check_io(name: str, size: int, address: int) -> None:
    if size <= 0:
        raise ValueError(f"{name}: IO size must be > 0 bytes, got {size}")
    if address < 0:
        raise ValueError(f"{name}: IO address must be >= 0 bytes, got {address}")


class _Variates:
    """Variates handed out one at a time, drawn ``_BLOCK`` at a time by ``draw(generator, n)`` from the
    caller's generator. A different generator object from the last call's starts a fresh block, so
    results depend only on the sequence of calls and generators, never on global state.
    """

    __slots__ = ("_buf", "_draw", "_i", "_rng")

    def __init__(self, draw: Callable[[np.random.Generator, int], np.ndarray]) -> None:
        self._draw = draw
        self._rng: np.random.Generator | None = None
        self._buf: list[float] = []
        self._i = 0

    def __call__(self, rng: np.random.Generator) -> float:
        i = self._i
        if rng is not self._rng or i >= len(self._buf):
            self._rng = rng
            self._buf = self._draw(rng, _BLOCK).tolist()
            i = 0
        self._i = i + 1
        return self._buf[i]


# ------------------------------------------------------------------------------------------------
# Hard disk
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeekSpec:
    """The three seek times a drive manual gives: single-track (1 cylinder), average (the weighted
    average over all seek distances, each distance d weighted by the C - d start positions it has), and
    full-stroke (C - 1 cylinders). Time Params (e.g. ms)."""

    single_track: Param
    average: Param
    full_stroke: Param


_SEEK_FIELDS = ("single_track", "average", "full_stroke")


@dataclass(frozen=True)
class SeekCurve:
    """Seek time (s) as a function of seek distance ``d`` (cylinders), Ruemmler & Wilkes (1994) form:

    ``t(0) = 0``; ``t(d) = a + b*sqrt(d)`` for ``1 <= d < boundary``; ``t(d) = c + e*d`` for
    ``d >= boundary``; continuous at ``boundary``. ``cylinders`` is the drive's cylinder count C.
    """

    a: float
    b: float
    c: float
    e: float
    boundary: float
    cylinders: int

    def __post_init__(self) -> None:
        if not isinstance(self.cylinders, int) or self.cylinders < 3:
            raise ValueError(f"seek curve cylinders must be an integer >= 3, got {self.cylinders!r}")
        if not 1 <= self.boundary <= self.cylinders - 1:
            raise ValueError(
                f"seek curve boundary must be in [1, {self.cylinders - 1}] cylinders, got {self.boundary}"
            )
        if self.b < 0 or self.e < 0 or self.a + self.b <= 0:
            raise ValueError(
                f"seek curve must be positive and non-decreasing: a+b > 0, b >= 0, e >= 0; got {self}"
            )
        short_end = self.a + self.b * math.sqrt(self.boundary)
        long_start = self.c + self.e * self.boundary
        if abs(short_end - long_start) > 1e-9 * max(1.0, abs(short_end)) + 1e-12:
            raise ValueError(
                f"seek curve must be continuous at boundary {self.boundary}: a + b*sqrt(boundary) = {short_end} s "
                f"but c + e*boundary = {long_start} s"
            )

    def __call__(self, d: int) -> float:
        """Seek time (s) for a distance of ``d`` cylinders (sign ignored)."""
        d = abs(d)
        if d == 0:
            return 0.0
        if d < self.boundary:
            return self.a + self.b * math.sqrt(d)
        return self.c + self.e * d

    def weighted_average(self) -> float:
        """The manuals' average seek (s): distances 1..C-1 weighted by C - d (all start/end pairs)."""
        return _weighted_sum(self.a, self.b, self.c, self.e, self.boundary, self.cylinders) / _pairs(
            self.cylinders
        )

    def mean_random(self, within: int | None = None) -> float:
        """Mean seek (s) between two independent uniformly random cylinders (distance 0 included):
        ``sum_d P(d) t(d)`` with ``P(0) = 1/C`` and ``P(d) = 2 (C - d) / C**2``. With ``within``,
        both cylinders lie among the first ``within`` (1..C): a short-stroked span."""
        c = self.cylinders
        if within is None or within == c:
            return self.weighted_average() * (c - 1) / c
        if isinstance(within, bool) or not isinstance(within, int) or not 1 <= within <= c:
            raise ValueError(f"seek span must be a whole number of cylinders in [1, {c}], got {within!r}")
        d = np.arange(1, within, dtype=np.float64)
        t = np.where(d < self.boundary, self.a + self.b * np.sqrt(d), self.c + self.e * d)
        return float(np.sum(2.0 * (within - d) * t)) / within**2

    @classmethod
    def fit(cls, single_track: float, average: float, full_stroke: float, cylinders: int) -> SeekCurve:
        """The curve through a datasheet's three seek times (s) on a drive of ``cylinders`` cylinders.

        Four coefficients and the boundary are fixed by five conditions: ``t(1) = single_track``,
        ``t(C-1) = full_stroke``, the weighted average equals ``average``, and the curve is continuous
        with a continuous slope at the boundary (so the short-seek square-root law hands over smoothly
        to the constant-velocity linear law). The boundary is found by root-finding.
        """
        return _fit_seek_curve(float(single_track), float(average), float(full_stroke), int(cylinders))


def _pairs(c: int) -> float:
    return c * (c - 1) / 2.0  # sum_{d=1}^{C-1} (C - d)


@lru_cache(maxsize=16)
def _weight_sums(c: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Prefix sums over d = 1..C-1 of w, w*sqrt(d), w*d with w = C - d (index k-1 holds the sum to k)."""
    d = np.arange(1, c, dtype=np.float64)
    w = c - d
    return np.cumsum(w), np.cumsum(w * np.sqrt(d)), np.cumsum(w * d)


def _weighted_sum(a: float, b: float, c_: float, e: float, boundary: float, c: int) -> float:
    cw, cws, cwn = _weight_sums(c)
    k = min(max(math.ceil(boundary) - 1, 0), c - 1)  # distances 1..k are short seeks (d < boundary)
    sw, sws, swn = (float(cw[k - 1]), float(cws[k - 1]), float(cwn[k - 1])) if k else (0.0, 0.0, 0.0)
    short = a * sw + b * sws
    long = c_ * (float(cw[-1]) - sw) + e * (float(cwn[-1]) - swn)
    return short + long


def _coefficients(t1: float, tf: float, c: int, boundary: float) -> tuple[float, float, float, float]:
    r = math.sqrt(boundary)
    b = (tf - t1) / (r / 2 + (c - 1) / (2 * r) - 1)
    a = t1 - b
    e = b / (2 * r)
    return a, b, a + b * r / 2, e


@lru_cache(maxsize=64)
def _fit_seek_curve(t1: float, avg: float, tf: float, c: int) -> SeekCurve:
    if not isinstance(c, int) or c < 3:
        raise ValueError(f"cylinders must be an integer >= 3, got {c!r}")
    if not 0 < t1 < avg < tf:
        raise ValueError(
            f"seek times must satisfy 0 < single_track < average < full_stroke, got {t1 * 1e3:g} ms, "
            f"{avg * 1e3:g} ms, {tf * 1e3:g} ms"
        )

    def gap(boundary: float) -> float:
        a, b, c_, e = _coefficients(t1, tf, c, boundary)
        return _weighted_sum(a, b, c_, e, boundary, c) / _pairs(c) - avg

    lo, hi = 1.0, float(c - 1)
    g_lo, g_hi = gap(lo), gap(hi)
    if g_lo * g_hi > 0:
        raise ValueError(
            f"average seek {avg * 1e3:g} ms cannot be reached by a sqrt/linear seek curve from "
            f"{t1 * 1e3:g} ms (1 cylinder) to {tf * 1e3:g} ms ({c - 1} cylinders): allowed range "
            f"({(avg - g_lo) * 1e3:.4g}, {(avg - g_hi) * 1e3:.4g}) ms"
        )
    boundary = brentq(gap, lo, hi, xtol=1e-9, rtol=1e-14) if g_lo and g_hi else (lo if not g_lo else hi)
    a, b, c_, e = _coefficients(t1, tf, c, boundary)
    return SeekCurve(a, b, c_, e, float(boundary), c)


class HDD:
    """A rotating disk: service time = command overhead + seek + rotational latency + media transfer.

    - seek: :class:`SeekCurve` fitted to the read (resp. write) :class:`SeekSpec`, over the distance
      between the head's cylinder and the IO's; writes use their own curve (longer settle);
    - rotational latency: uniform on ``[0, 60/rpm)`` seconds;
    - transfer: ``size / rate`` at the IO's start address. Zoned recording: with ``media_rate_inner``,
      ``media_rate`` is the outer-zone rate (address 0) and the rate falls linearly with the address to
      ``media_rate_inner`` at the last byte (outer tracks hold more sectors per revolution); without
      it, one sustained rate for the whole surface;
    - an IO that starts exactly where the previous one ended (a sequential stream) pays neither seek
      nor rotation: the head is on the track and the data is arriving under it.

    Logical byte addresses map linearly onto cylinders: ``cylinder = address * C // capacity``. The
    head rests on the cylinder of the last byte transferred. ``parallelism`` is 1.

    **Rotational position.** By default the rotational latency is drawn, uniform on a revolution, as
    the head meets the track at a random angle. A scheduler that orders commands by their access time
    (:class:`~storagelab.kernel.disciplines.ShortestAccessFirst`, as drives with rotational position
    ordering do) needs the angle itself: :meth:`track_rotation` makes the platter turn with the run's
    clock (angle 0 at time 0) and gives each address its angle on its track (its offset within the
    ``media_rate x revolution`` bytes a track holds there), so the rotational latency is the time from
    the end of the seek until the IO's first byte passes under the head, and :meth:`access_time` says
    what a command would cost if it started now.
    """

    parallelism: int = 1
    state_dependent: ClassVar[bool] = True
    PRESETS: ClassVar[dict[str, Callable[[], HDD]]] = {}

    def __init__(
        self,
        name: str,
        *,
        rpm: Param,
        capacity: Param,
        cylinders: Param,
        read_seek: SeekSpec,
        write_seek: SeekSpec,
        media_rate: Param,
        overhead: Param,
        media_rate_inner: Param | None = None,
    ) -> None:
        self.name = str(name)
        rps = _param("rpm", rpm, "rotation_rate", 1.0, 1000.0)  # revolutions per second
        cap = _param("capacity", capacity, "size", 1.0)
        cyl = _param("cylinders", cylinders, "count", 3.0)
        if cyl != int(cyl):
            raise ValueError(f"cylinders must be a whole number, got {cylinders.value}")
        rate = _param("media_rate", media_rate, "throughput", 1.0)
        inner = rate if media_rate_inner is None else _param("media_rate_inner", media_rate_inner, "throughput", 1.0)
        if inner > rate:
            raise ValueError(
                f"media_rate_inner ({inner / 1e6:g} MB/s) must not exceed media_rate, the outer-zone rate "
                f"({rate / 1e6:g} MB/s)"
            )
        ovh = _param("overhead", overhead, "time", 0.0, 1.0)
        curves = []
        for label, spec in (("read_seek", read_seek), ("write_seek", write_seek)):
            if not isinstance(spec, SeekSpec):
                raise ValueError(
                    f"{label} must be a SeekSpec(single_track, average, full_stroke), got {spec!r}"
                )
            t = [_param(f"{label}.{f}", getattr(spec, f), "time", 1e-9, 1.0) for f in _SEEK_FIELDS]
            curves.append(SeekCurve.fit(t[0], t[1], t[2], int(cyl)))
        self.params: dict[str, Param] = {
            "rpm": rpm, "capacity": capacity, "cylinders": cylinders, "media_rate": media_rate, "overhead": overhead,
            **{f"read_seek.{f}": getattr(read_seek, f) for f in _SEEK_FIELDS},
            **{f"write_seek.{f}": getattr(write_seek, f) for f in _SEEK_FIELDS},
        }  # fmt: skip
        if media_rate_inner is not None:
            self.params["media_rate_inner"] = media_rate_inner
        self.capacity = int(cap)
        self.cylinders = int(cyl)
        self.revolution = 1.0 / rps  # s
        self.media_rate = rate  # B/s, outer zone (address 0)
        self.media_rate_inner = inner  # B/s, at the last byte
        self._rate_slope = (inner - rate) / cap  # B/s per byte of address
        # mean of 1 / rate over uniformly random addresses (s/B): the harmonic mean of the linear profile
        self._mean_inverse_rate = 1 / rate if inner == rate else math.log(rate / inner) / (rate - inner)
        self.overhead = ovh  # s
        self.read_curve, self.write_curve = curves
        self._uniform = _Variates(lambda g, n: g.random(n))
        self.reset()

    def reset(self, cylinder: int = 0) -> None:
        """Put the head on ``cylinder`` and forget the last IO (no sequential continuation pending)."""
        if not 0 <= cylinder < self.cylinders:
            raise ValueError(f"{self.name}: cylinder must be in [0, {self.cylinders - 1}], got {cylinder}")
        self.head = int(cylinder)
        self._next = -1  # byte address right after the last IO
        self._env = None  # with rotation tracking: the run whose clock turns the platter

    def track_rotation(self, env: object) -> None:
        """Turn the platter with ``env``'s clock (an object with a ``now`` in seconds): rotational
        latencies follow from the angles of the head and the IO instead of being drawn."""
        self._env = env

    def angle(self, address: int) -> float:
        """Where byte ``address`` lies on its track, as a fraction of a revolution in [0, 1)."""
        track = (self.media_rate + self._rate_slope * address) * self.revolution  # bytes per track there
        return (address / track) % 1.0

    def rotational_latency(self, address: int, at: float) -> float:
        """With rotation tracking: seconds from ``at`` (the head on the track) until byte ``address``
        passes under the head."""
        return ((self.angle(address) - at / self.revolution) % 1.0) * self.revolution

    def access_time(self, is_read: bool, address: int, now: float) -> float:
        """With rotation tracking: seconds a command at ``address`` would spend before its first byte
        transfers if it started at ``now`` (overhead, seek and rotational latency; overhead only for
        the continuation of the last IO)."""
        if address == self._next:
            return self.overhead
        d = address * self.cylinders // self.capacity - self.head
        t = self.overhead + ((self.read_curve if is_read else self.write_curve)(d) if d else 0.0)
        return t + self.rotational_latency(address, now + t)

    def cylinder(self, address: int) -> int:
        """The cylinder holding byte ``address`` (linear mapping of capacity onto cylinders)."""
        if not 0 <= address < self.capacity:
            raise CapacityExceeded(f"{self.name}: address must be in [0, {self.capacity}) bytes, got {address}")
        return address * self.cylinders // self.capacity

    def seek_distance(self, address: int) -> int:
        """Signed distance (cylinders) from the head to ``address``: > 0 outward (higher cylinders)."""
        return self.cylinder(address) - self.head

    def seek_time(self, distance: int, is_read: bool = True) -> float:
        """Seek time (s) over ``distance`` cylinders for a read or a write."""
        return (self.read_curve if is_read else self.write_curve)(distance)

    def service_time(self, is_read: bool, size: int, address: int, rng: np.random.Generator) -> float:
        """Seconds to serve one IO starting now; moves the head to the IO's last byte."""
        end = address + size
        if size <= 0 or address < 0 or end > self.capacity:
            _check_io(self.name, size, address)
            raise CapacityExceeded(
                f"{self.name}: IO [{address}, {end}) runs past the capacity {self.capacity} bytes"
            )
        t = self.overhead + size / (self.media_rate + self._rate_slope * address)
        if address != self._next:
            cyls, cap = self.cylinders, self.capacity
            d = address * cyls // cap - self.head
            seek = (self.read_curve if is_read else self.write_curve)(d) if d else 0.0
            t += seek
            if self._env is None:
                t += self._uniform(rng) * self.revolution
            else:  # the first byte comes round after the command's overhead and its seek
                t += self.rotational_latency(address, self._env.now + self.overhead + seek)
        self.head = (end - 1) * self.cylinders // self.capacity
        self._next = end
        return t

    def media_rate_at(self, address: int) -> float:
        """Sustained media transfer rate (B/s) at byte ``address`` (outer zone at address 0)."""
        return self.media_rate + self._rate_slope * address

    def mean_service_time(self, is_read: bool, size: int, span: int | None = None) -> float:
        """Analytic mean (s) for an IO at a uniformly random address, independent of the head:
        mean random seek + half a revolution + ``size`` x the mean of 1 / rate over the surface +
        overhead. With ``span`` (bytes), the addresses lie in the drive's first ``span`` bytes (its
        outer cylinders, as a volume using a fraction of the drive): shorter seeks, outer-zone rates."""
        _check_io(self.name, size, 0)
        curve = self.read_curve if is_read else self.write_curve
        if span is None or span >= self.capacity:
            return curve.mean_random() + self.revolution / 2 + size * self._mean_inverse_rate + self.overhead
        if isinstance(span, bool) or not isinstance(span, int) or span < size:
            raise ValueError(f"{self.name}: span must be a whole number of bytes >= the IO size {size}, got {span!r}")
        inner = self.media_rate + self._rate_slope * span  # B/s at the span's last byte
        inverse = 1 / inner if inner == self.media_rate else math.log(self.media_rate / inner) / (self.media_rate - inner)
        seek = curve.mean_random(max(1, -(-span * self.cylinders // self.capacity)))
        return seek + self.revolution / 2 + size * inverse + self.overhead

    def __repr__(self) -> str:
        return (
            f"HDD({self.name!r}, {60 / self.revolution:.0f} rpm, {self.capacity / 1e9:g} GB, "
            f"mean 4 KiB random read {self.mean_service_time(True, DATASHEET_BLOCK) * 1e3:.3f} ms)"
        )

    @classmethod
    def preset(cls, name: str) -> HDD:
        """A fresh drive of a named class: one of :attr:`PRESETS`."""
        return _lookup(cls.PRESETS, name, "HDD")()


# ------------------------------------------------------------------------------------------------
# Flash and memory
# ------------------------------------------------------------------------------------------------


class SSD:
    """A flash SSD: ``base latency + size / (bandwidth / parallelism)`` per IO, read/write asymmetric, on
    each of ``parallelism`` internal units (channels/dies the controller keeps busy at once; the station
    gives the device that many servers). The datasheet bandwidth is the whole device's: the units share
    it, so many large IOs in flight reach the datasheet's sequential rate, not ``parallelism`` times it. With ``jitter_scv > 0`` each time is multiplied by a lognormal
    factor of mean 1 and that squared coefficient of variation, so the mean is unchanged.
    The service time does not depend on the address or on state.

    **Buffered writes.** An enterprise SSD acknowledges a write from its power-protected DRAM buffer
    and programs the flash in the background. With ``host_write_latency`` (the datasheet's write
    latency) and ``write_buffer`` (bytes), :func:`storagelab.components.flash.flash_drive` puts such a
    buffer in front of the device's station: a write completes after ``host_write_latency`` (+ the
    transfer of any bytes beyond a 4 KiB block) while the buffer has room, and the units spend the
    write service time above programming it, competing with reads. Internal parallelism then sets the
    sustained write rate (the datasheet's write IOPS), not the write latency.
    """

    state_dependent: ClassVar[bool] = False
    interface: ClassVar[str] = "SATA/SAS"
    PRESETS: ClassVar[dict[str, Callable[[], SSD]]] = {}

    def __init__(
        self,
        name: str,
        *,
        read_latency: Param,
        write_latency: Param,
        read_bandwidth: Param,
        write_bandwidth: Param,
        parallelism: Param,
        jitter_scv: float = 0.0,
        capacity: Param | None = None,
        host_write_latency: Param | None = None,
        write_buffer: Param | None = None,
    ) -> None:
        self.name = str(name)
        if (host_write_latency is None) != (write_buffer is None):
            raise ValueError(f"{name}: give host_write_latency and write_buffer together (buffered writes) or neither")
        self.host_write_latency = (
            None if host_write_latency is None else _param("host_write_latency", host_write_latency, "time", 1e-9, 1.0)
        )
        self.write_buffer = None if write_buffer is None else int(_param("write_buffer", write_buffer, "size", 4096))
        self.read_latency = _param("read_latency", read_latency, "time", 0.0, 1.0)
        self.write_latency = _param("write_latency", write_latency, "time", 0.0, 1.0)
        self.read_bandwidth = _param("read_bandwidth", read_bandwidth, "throughput", 1.0)
        self.write_bandwidth = _param("write_bandwidth", write_bandwidth, "throughput", 1.0)
        par = _param("parallelism", parallelism, "count", 1.0, 4096.0)
        if par != int(par):
            raise ValueError(f"parallelism must be a whole number of units, got {parallelism.value}")
        self.parallelism = int(par)
        # each unit's share of the device's bandwidth (B/s)
        self._read_unit_bw = self.read_bandwidth / self.parallelism
        self._write_unit_bw = self.write_bandwidth / self.parallelism
        if not isinstance(jitter_scv, int | float) or not 0 <= jitter_scv <= 100:
            raise ValueError(
                f"jitter_scv must be a number in [0, 100] (squared coefficient of variation), got {jitter_scv!r}"
            )
        self.jitter_scv = float(jitter_scv)
        self.capacity = None if capacity is None else int(_param("capacity", capacity, "size", 1.0))
        self.params: dict[str, Param] = {
            "read_latency": read_latency, "write_latency": write_latency, "read_bandwidth": read_bandwidth,
            "write_bandwidth": write_bandwidth, "parallelism": parallelism,
        }  # fmt: skip
        if capacity is not None:
            self.params["capacity"] = capacity
        if host_write_latency is not None:
            self.params |= {"host_write_latency": host_write_latency, "write_buffer": write_buffer}
        sigma = math.sqrt(math.log1p(self.jitter_scv))
        self._sigma = sigma
        self._factor = _Variates(lambda g, n: g.lognormal(-sigma * sigma / 2, sigma, n))  # mean 1

    def service_time(self, is_read: bool, size: int, address: int, rng: np.random.Generator) -> float:
        """Seconds one internal unit spends on this IO."""
        if size <= 0 or address < 0 or (self.capacity is not None and address + size > self.capacity):
            _check_io(self.name, size, address)
            raise CapacityExceeded(
                f"{self.name}: IO [{address}, {address + size}) runs past the capacity {self.capacity} bytes"
            )
        if is_read:
            t = self.read_latency + size / self._read_unit_bw
        else:
            t = self.write_latency + size / self._write_unit_bw
        if self._sigma:
            t *= self._factor(rng)
        return t

    def mean_service_time(self, is_read: bool, size: int) -> float:
        """Analytic mean (s): base latency + size / the unit's share of the bandwidth (jitter has mean 1)."""
        _check_io(self.name, size, 0)
        if is_read:
            return self.read_latency + size / self._read_unit_bw
        return self.write_latency + size / self._write_unit_bw

    def host_write_time(self, size: int = DATASHEET_BLOCK) -> float:
        """Mean time (s) a host waits for a ``size``-byte write on an idle device: the buffered write
        latency (plus the transfer beyond a 4 KiB block) if writes are buffered, else the write service."""
        if self.host_write_latency is None:
            return self.mean_service_time(False, size)
        _check_io(self.name, size, 0)
        return self.host_write_latency + max(size - DATASHEET_BLOCK, 0) / self.write_bandwidth

    def max_iops(self, is_read: bool, size: int = DATASHEET_BLOCK) -> float:
        """Saturation throughput (IO/s) for IOs of ``size`` bytes: parallelism / mean service time."""
        return self.parallelism / self.mean_service_time(is_read, size)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.name!r}, parallelism {self.parallelism}, 4 KiB read "
            f"{self.mean_service_time(True, DATASHEET_BLOCK) * 1e6:.1f} us / write "
            f"{self.mean_service_time(False, DATASHEET_BLOCK) * 1e6:.1f} us)"
        )

    @classmethod
    def preset(cls, name: str) -> SSD:
        """A fresh device of a named class: one of :attr:`PRESETS`."""
        return _lookup(cls.PRESETS, name, cls.__name__)()

    @classmethod
    def from_datasheet(
        cls,
        name: str,
        *,
        read_iops: Param,
        write_iops: Param,
        read_latency: Param,
        read_bandwidth: Param,
        write_bandwidth: Param,
        parallelism: Param | None = None,
        block: int = DATASHEET_BLOCK,
        capacity: Param | None = None,
        jitter_scv: float = 0.0,
        write_latency: Param | None = None,
        write_buffer: Param | None = None,
    ) -> SSD:
        """A device whose ``parallelism / mean service time`` reproduces the datasheet's random IOPS.

        Unless given, ``parallelism`` is ``round(read_iops * read_latency)`` (the units a closed loop
        must keep busy to reach the rated IOPS at the rated latency), at least 1. The base latencies
        are then fitted: ``base = parallelism / iops - block x parallelism / bandwidth`` (each unit has its
        share of the bandwidth), so the mean service time of
        a ``block``-byte IO is exactly ``parallelism / iops``. The modelled QD1 read latency differs from
        the datasheet's by the rounding of parallelism, at most ``0.5 / (read_iops * read_latency)``
        relative. The units' write service time keeps the write IOPS; the datasheet ``write_latency``
        (a buffered write) is what the host sees when ``write_buffer`` is given too (see the class
        docstring).
        """
        r_iops = _param("read_iops", read_iops, "io_rate", 1.0)
        w_iops = _param("write_iops", write_iops, "io_rate", 1.0)
        r_lat = _param("read_latency", read_latency, "time", 1e-9, 1.0)
        r_bw = _param("read_bandwidth", read_bandwidth, "throughput", 1.0)
        w_bw = _param("write_bandwidth", write_bandwidth, "throughput", 1.0)
        if not isinstance(block, int) or block <= 0:
            raise ValueError(f"block must be a positive number of bytes, got {block!r}")
        if parallelism is None:
            units = max(1, round(r_iops * r_lat))
            parallelism = Param(
                units, "count", "datasheet",
                f"arithmetic on the datasheet: round(read IOPS {read_iops.value:g} x read latency {read_latency.value:g} {read_latency.unit}) "
                f"= round({r_iops * r_lat:.3f})",
            )  # fmt: skip
        units = _param("parallelism", parallelism, "count", 1.0, 4096.0)
        base = {}
        for op, iops, p_iops, bw, p_bw in (("read", r_iops, read_iops, r_bw, read_bandwidth),
                                           ("write", w_iops, write_iops, w_bw, write_bandwidth)):  # fmt: skip
            s = units / iops - block * units / bw
            if s < 0:
                raise ValueError(
                    f"{name}: {op} IOPS {iops:g} with parallelism {units:g} leaves no time for a {block}-byte "
                    f"transfer at {bw:g} B/s; raise parallelism or check the datasheet numbers"
                )
            base[op] = Param(
                s * 1e6, "us", "datasheet",
                f"arithmetic on the datasheet: parallelism {units:g} / {op} IOPS {p_iops.value:g} - {block} B x {units:g} / {op} "
                f"bandwidth {p_bw.value:g} {p_bw.unit}, so that parallelism / mean {block}-byte service time = datasheet IOPS",
            )  # fmt: skip
        dev = cls(
            name,
            read_latency=base["read"],
            write_latency=base["write"],
            read_bandwidth=read_bandwidth,
            write_bandwidth=write_bandwidth,
            parallelism=parallelism,
            jitter_scv=jitter_scv,
            capacity=capacity,
            host_write_latency=write_latency,
            write_buffer=write_buffer,
        )
        dev.params.update(
            {"read_iops": read_iops, "write_iops": write_iops, "datasheet_read_latency": read_latency}
        )
        return dev


class NVMe(SSD):
    """An NVMe (PCIe) flash SSD: the same service model as :class:`SSD`, its own presets."""

    interface: ClassVar[str] = "NVMe"
    PRESETS: ClassVar[dict[str, Callable[[], SSD]]] = {}


class DRAM:
    """Memory used as a storage tier: ``latency + size / bandwidth`` per IO on each of ``parallelism``
    channels. Reads and writes cost the same; no state, no randomness."""

    state_dependent: ClassVar[bool] = False
    PRESETS: ClassVar[dict[str, Callable[[], DRAM]]] = {}

    def __init__(self, name: str, *, latency: Param, bandwidth: Param, parallelism: Param) -> None:
        self.name = str(name)
        self.latency = _param("latency", latency, "time", 0.0, 1.0)
        self.bandwidth = _param("bandwidth", bandwidth, "throughput", 1.0)
        par = _param("parallelism", parallelism, "count", 1.0, 4096.0)
        if par != int(par):
            raise ValueError(f"parallelism must be a whole number of channels, got {parallelism.value}")
        self.parallelism = int(par)
        self.params: dict[str, Param] = {
            "latency": latency,
            "bandwidth": bandwidth,
            "parallelism": parallelism,
        }

    def service_time(self, is_read: bool, size: int, address: int, rng: np.random.Generator) -> float:
        """Seconds one channel spends on this IO."""
        if size <= 0 or address < 0:
            _check_io(self.name, size, address)
        return self.latency + size / self.bandwidth

    def mean_service_time(self, is_read: bool, size: int) -> float:
        """Exact (deterministic) service time (s)."""
        _check_io(self.name, size, 0)
        return self.latency + size / self.bandwidth

    def __repr__(self) -> str:
        return f"DRAM({self.name!r}, {self.latency * 1e9:g} ns + size / {self.bandwidth / 1e9:g} GB/s)"

    @classmethod
    def preset(cls, name: str) -> DRAM:
        """A named memory tier: one of :attr:`PRESETS`."""
        return _lookup(cls.PRESETS, name, "DRAM")()


def _lookup(table: dict, name: str, family: str):
    try:
        return table[name]
    except KeyError:
        raise ValueError(f"unknown {family} preset {name!r}; known: {', '.join(map(repr, table))}") from None


def preset(name: str) -> HDD | SSD | DRAM:
    """A fresh device of any family by preset name (see :func:`preset_names`)."""
    for family in (HDD, SSD, NVMe, DRAM):
        if name in family.PRESETS:
            return family.PRESETS[name]()
    raise ValueError(f"unknown device preset {name!r}; known: {', '.join(map(repr, preset_names()))}")


class ScaledDevice:
    """A device model whose service times are ``factor`` times those of ``model`` (everything else, its
    parallelism, capacity and state, is the model's): what the calibration's sensitivity check builds
    when it halves or doubles a preset's capacity."""

    def __init__(self, model: object, factor: float) -> None:
        if not factor > 0:
            raise ValueError(f"a service-time factor must be positive, got {factor!r}")
        object.__setattr__(self, "model", model)
        object.__setattr__(self, "factor", float(factor))

    def service_time(self, is_read: bool, size: int, address: int, rng: np.random.Generator) -> float:
        return self.factor * self.model.service_time(is_read, size, address, rng)

    def mean_service_time(self, is_read: bool, size: int) -> float:
        return self.factor * self.model.mean_service_time(is_read, size)

    @property
    def host_write_latency(self) -> float | None:
        """A buffered SSD's write latency, scaled like its service times (None if writes are not buffered)."""
        lat = getattr(self.model, "host_write_latency", None)
        return None if lat is None else self.factor * lat

    @property
    def write_bandwidth(self) -> float:
        return self.model.write_bandwidth / self.factor

    def host_write_time(self, size: int = DATASHEET_BLOCK) -> float:
        return self.factor * self.model.host_write_time(size)

    def __getattr__(self, name: str) -> object:
        return getattr(self.model, name)

    def __setattr__(self, name: str, value: object) -> None:
        setattr(self.model, name, value)


def preset_names() -> tuple[str, ...]:
    """Every preset name, all families."""
    return tuple(n for family in (HDD, SSD, NVMe, DRAM) for n in family.PRESETS)


# ------------------------------------------------------------------------------------------------
# Presets. Sources: the project's studies (../shared/seeds, cited by file name) and product manuals.
# ------------------------------------------------------------------------------------------------

_DS5020 = "002_3dbf0d9df4c2366f.txt (ESG Lab, IBM DS5020)"
_VSAN = "001_8f3c5816f8fbf1d5.txt (Intel + VMware Virtual SAN 5.5)"
_NEXGEN = "000_95d1997ae9f905ef.txt (NexGen N5, Principled Technologies)"
_CHEETAH = "Seagate Cheetah 15K.7 product manual (100516226), seek performance table"
_SAVVIO = "Seagate Savvio 10K.1 SAS product manual rev. D, section 4.2.1 (excluding controller overhead)"

#: Controller overhead: the Savvio manual gives access times with and without it (4.2 vs 4.0 ms read).
_OVERHEAD = Param(
    0.2, "ms", "datasheet",
    "Seagate Savvio 10K.1 SAS product manual rev. D, 4.2.1: average read access 4.2 ms including controller "
    "overhead vs 4.0 ms excluding it; applied to every HDD preset (other manuals do not split it out)",
)  # fmt: skip


def _hdd_15k() -> HDD:
    return HDD(
        "15K FC/SAS",
        rpm=Param(15000, "rpm", "document", f"{_DS5020}: '112 15K RPM FC drives'"),
        capacity=Param(300, "GB", "document", f"{_DS5020}: '300GB 15K FC HDD', quantity 112"),
        cylinders=Param(107500, "count", "datasheet", f"{_CHEETAH} (ST3450857SS), as tabulated in the "
                        "ClusterStor/Mero 'desim' disk model: 107,500 cylinders"),
        read_seek=SeekSpec(
            Param(0.2, "ms", "datasheet", f"{_CHEETAH}: track-to-track read 0.2 ms"),
            Param(3.4, "ms", "datasheet", f"{_CHEETAH}: average read seek 3.4 ms"),
            Param(6.6, "ms", "datasheet", f"{_CHEETAH}: full-stroke read 6.6 ms"),
        ),
        write_seek=SeekSpec(
            Param(0.44, "ms", "datasheet", f"{_CHEETAH}: track-to-track write 0.44 ms"),
            Param(3.9, "ms", "datasheet", f"{_CHEETAH}: average write seek 3.9 ms"),
            Param(7.4, "ms", "datasheet", f"{_CHEETAH}: full-stroke write 7.4 ms"),
        ),
        media_rate=Param(204, "MB/s", "datasheet", "Seagate Cheetah 15K.7 product manual: sustained transfer "
                         "rate 122 to 204 MB/s (inner to outer zone); the outer zone"),
        media_rate_inner=Param(122, "MB/s", "datasheet", "Seagate Cheetah 15K.7 product manual: sustained "
                               "transfer rate 122 to 204 MB/s (inner to outer zone); the inner zone"),
        overhead=_OVERHEAD,
    )  # fmt: skip


def _hdd_10k() -> HDD:
    return HDD(
        "10K SAS",
        rpm=Param(10000, "rpm", "document", f"{_VSAN}: '16x 1.2 TB SAS 10K RPM HDD Seagate ST1200MM0017'"),
        capacity=Param(1.2, "TB", "document", f"{_VSAN}: '16x 1.2 TB SAS 10K RPM HDD Seagate ST1200MM0017'"),
        cylinders=Param(51052, "count", "datasheet", "Seagate Savvio 10K.1 SAS product manual rev. D, 4.1: "
                        "51,052 tracks per surface (earlier drive of the same 2.5-inch 10K family)"),
        read_seek=SeekSpec(
            Param(0.2, "ms", "datasheet", f"{_SAVVIO}: single-track read 0.20 ms (same 2.5-inch 10K family as "
                  "the ST1200MM0017, whose own manual was not consulted)"),
            Param(4.0, "ms", "datasheet", f"{_SAVVIO}: average read 4.0 ms"),
            Param(8.1, "ms", "datasheet", f"{_SAVVIO}: full-stroke read 8.1 ms"),
        ),
        write_seek=SeekSpec(
            Param(0.6, "ms", "datasheet", f"{_SAVVIO}: single-track write 0.60 ms"),
            Param(4.4, "ms", "datasheet", f"{_SAVVIO}: average write 4.4 ms"),
            Param(8.6, "ms", "datasheet", f"{_SAVVIO}: full-stroke write 8.6 ms"),
        ),
        media_rate=Param(124, "MB/s", "datasheet", "Seagate Savvio 10K.3 SAS product manual rev. G, 5.2.3: "
                         "sustained transfer rate 67 to 124 MB/s; the outer zone (a 1.2 TB drive is faster)"),
        media_rate_inner=Param(67, "MB/s", "datasheet", "Seagate Savvio 10K.3 SAS product manual rev. G, "
                               "5.2.3: sustained transfer rate 67 to 124 MB/s; the inner zone"),
        overhead=_OVERHEAD,
    )  # fmt: skip


def _hdd_7k2() -> HDD:
    full = "about twice the average seek, the ratio of the Cheetah 15K.7 (6.6 / 3.4 ms) and Savvio 10K.1 " \
           "(8.1 / 4.0 ms) manuals; no full-stroke figure for a 7.2K nearline drive was at hand"  # fmt: skip
    return HDD(
        "7.2K NL-SAS",
        rpm=Param(7200, "rpm", "document", f"{_NEXGEN}, Figure 51: Toshiba MG03SCA300, 'Disk RPM 7200'"),
        capacity=Param(3, "TB", "document", f"{_NEXGEN}, Figure 51: Toshiba MG03SCA300, 'Disk size (GB) 3 TB'"),
        cylinders=Param(320800, "count", "datasheet", "Seagate Constellation ES.3 SAS product manual rev. B, 4.1 "
                        "(1-4 TB 7200 rpm nearline SAS): 320,800 tracks per surface"),
        read_seek=SeekSpec(
            Param(0.23, "ms", "datasheet", "WD/HGST Ultrastar DC HC310 specification, 4.5.1.2: single-track "
                  "read 0.23 ms typical (a 7200 rpm nearline drive; the MG03SCA300 manual was not consulted)"),
            Param(8.2, "ms", "datasheet", "HGST Ultrastar 7K4000 SAS specification, 4.4.1.1: average read "
                  "seek 8.2 ms typical (2-4 TB 7200 rpm nearline SAS, same generation as the MG03SCA300)"),
            Param(16.4, "ms", "device-physics", f"full-stroke read: {full}"),
        ),
        write_seek=SeekSpec(
            Param(0.32, "ms", "datasheet", "WD/HGST Ultrastar DC HC310 specification, 4.5.1.2: single-track "
                  "write 0.32 ms typical"),
            Param(8.2, "ms", "datasheet", "HGST Ultrastar 7K4000 SAS specification, 4.4.1.1: average write "
                  "seek 8.2 ms typical"),
            Param(16.4, "ms", "device-physics", f"full-stroke write: {full}"),
        ),
        media_rate=Param(175, "MB/s", "datasheet", "Seagate Constellation ES.3 SAS product manual rev. B, "
                         "4.1.2: sustained transfer rate 83 to 175 MB/s; the outer zone"),
        media_rate_inner=Param(83, "MB/s", "datasheet", "Seagate Constellation ES.3 SAS product manual rev. B, "
                               "4.1.2: sustained transfer rate 83 to 175 MB/s; the inner zone"),
        overhead=_OVERHEAD,
    )  # fmt: skip


HDD.PRESETS.update({"15K FC/SAS": _hdd_15k, "10K SAS": _hdd_10k, "7.2K NL-SAS": _hdd_7k2})

_S3700 = "Intel SSD DC S3700 product specification (800 GB)"
_P3700 = "Intel SSD DC P3700 product specification (800 GB)"


#: Write buffer of the SSD presets: not in the datasheets.
_SSD_BUFFER = Param(16, "MiB", "assumption", "power-loss-protected DRAM write buffer of an enterprise SSD, of "
                    "order tens of MB; not in the datasheets. It only sets how long a write burst above the "
                    "write IOPS is absorbed at the buffered latency")


def _sata_ssd() -> SSD:
    return SSD.from_datasheet(
        "SATA SSD",
        read_iops=Param(75000, "IOPS", "datasheet", f"{_S3700}: 4 KB random read up to 75,000 IOPS"),
        write_iops=Param(36000, "IOPS", "datasheet", f"{_S3700}: 4 KB random write up to 36,000 IOPS"),
        read_latency=Param(50, "us", "datasheet", f"{_S3700}: typical read latency 50 us (4 KB, QD1, "
                           "sequential; measured QD1 random reads are slower, about 150 us in AnandTech's test)"),
        write_latency=Param(65, "us", "datasheet", f"{_S3700}: typical write latency 65 us (4 KB, QD1, "
                            "sequential; acknowledged from the drive's power-protected buffer)"),
        write_buffer=_SSD_BUFFER,
        read_bandwidth=Param(500, "MB/s", "datasheet", f"{_S3700}: sequential read up to 500 MB/s"),
        write_bandwidth=Param(460, "MB/s", "datasheet", f"{_S3700}: sequential write up to 460 MB/s"),
        capacity=Param(800, "GB", "document", f"{_VSAN}: '4x 800GB Intel SSD DC S3700 Series'"),
    )  # fmt: skip


def _nvme_ssd() -> SSD:
    return NVMe.from_datasheet(
        "NVMe SSD",
        read_iops=Param(450000, "IOPS", "datasheet", f"{_P3700}: 4 KB random read, rated at least 450,000 "
                        "IOPS at every capacity (Tom's Hardware P3700 review, 2014)"),
        write_iops=Param(90000, "IOPS", "datasheet", f"{_P3700}: 4 KB random write up to 90,000 IOPS"),
        read_latency=Param(20, "us", "datasheet", f"{_P3700}: typical read latency 20 us (4 KB, QD1, sequential)"),
        write_latency=Param(20, "us", "datasheet", f"{_P3700}: typical write latency 20 us (4 KB, QD1, "
                            "sequential; acknowledged from the drive's power-protected buffer)"),
        write_buffer=_SSD_BUFFER,
        read_bandwidth=Param(2800, "MB/s", "datasheet", f"{_P3700}: sequential read up to 2,800 MB/s"),
        write_bandwidth=Param(1900, "MB/s", "datasheet", f"{_P3700}: sequential write up to 1,900 MB/s"),
        capacity=Param(800, "GB", "document", f"{_VSAN}: '4x 800GB Intel SSD DC P3700 Series with NVMe'"),
    )  # fmt: skip


_IODRIVE2 = ("Fusion-io ioDrive2 specifications, 785 GB MLC model (announced October 2011; tabulated at "
             "qdpma.com/storage/SSD_Fusion.html)")


def _iodrive2() -> SSD:
    return SSD.from_datasheet(
        "ioDrive2 785GB",
        read_iops=Param(141000, "IOPS", "datasheet", f"{_IODRIVE2}: 'Read IOPS (512 Byte) ... 141,000'"),
        write_iops=Param(535000, "IOPS", "datasheet", f"{_IODRIVE2}: 'Write IOPS (512 Byte) 535,000'"),
        read_latency=Param(68, "us", "datasheet", f"{_IODRIVE2}: 'Read Access Latency ... 68 us'"),
        read_bandwidth=Param(1.5, "GB/s", "datasheet", f"{_IODRIVE2}: 'Read Bandwidth (1MB) ... 1.5 GB/s'"),
        write_bandwidth=Param(1.1, "GB/s", "datasheet", f"{_IODRIVE2}: 'Write Bandwidth (1MB) ... 1.1 GB/s'"),
        block=512,
        capacity=Param(785, "GB", "document", f"{_NEXGEN}: 'Cisco UCS Fusion ioDrive2 785GB adapter'"),
    )  # fmt: skip


SSD.PRESETS.update({"SATA SSD": _sata_ssd, "ioDrive2 785GB": _iodrive2})
NVMe.PRESETS.update({"NVMe SSD": _nvme_ssd})


def _dram() -> DRAM:
    return DRAM(
        "DDR3 DRAM",
        latency=Param(0.1, "us", "device-physics", "DDR3 random access (row activate + CAS + controller), of "
                      "order 100 ns"),
        bandwidth=Param(10.664, "GB/s", "device-physics", f"one DDR3 channel at the 1,333 MT/s the servers of "
                        f"{_NEXGEN} (Figure 50) run their memory: 1,333e6 transfers x 8 bytes"),
        parallelism=Param(4, "count", "device-physics", "four memory channels per Intel Xeon E5 socket"),
    )  # fmt: skip


DRAM.PRESETS.update({"DDR3 DRAM": _dram})
