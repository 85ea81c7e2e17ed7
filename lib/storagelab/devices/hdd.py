"""Hard disks: the datasheet's seek times (:class:`SeekSpec`), the seek curve fitted to them
(:class:`SeekCurve`) and the drive model (:class:`HDD`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar, Protocol

import numpy as np
from scipy.optimize import brentq

from storagelab.devices.model import DATASHEET_BLOCK, CapacityExceeded, _check_io, _lookup, _param, _Variates
from storagelab.kernel.io import IORequest
from storagelab.provenance import Param


class Clock(Protocol):
    """What turns a tracked platter: an object with the run's time ``now`` (s), as a kernel
    :class:`~storagelab.kernel.event_loop.Environment` has."""

    @property
    def now(self) -> float: ...


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
        read_seek: object,  # a SeekSpec: checked below, with an error naming the argument
        write_seek: object,
        media_rate: Param,
        overhead: Param,
        media_rate_inner: Param | None = None,
    ) -> None:
        self.name = str(name)
        #: the station serving this drive (a drive's head serves one: :class:`~storagelab.kernel.station.Station`
        #: checks when it binds)
        self._station: object | None = None
        rps = _param("rpm", rpm, "rotation_rate", 1.0, 1000.0)  # revolutions per second
        cap = _param("capacity", capacity, "size", 1.0)
        cyl = _param("cylinders", cylinders, "count", 3.0)
        if cyl != int(cyl):
            raise ValueError(f"cylinders must be a whole number, got {cylinders.value}")
        rate = _param("media_rate", media_rate, "throughput", 1.0)
        inner = (
            rate
            if media_rate_inner is None
            else _param("media_rate_inner", media_rate_inner, "throughput", 1.0)
        )
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
        self._env: Clock | None = None  # with rotation tracking: the run whose clock turns the platter

    def track_rotation(self, env: Clock) -> None:
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

    def shortest_access(self, jobs: Sequence[list], window: int, now: float) -> int:
        """With rotation tracking: the index, among the first ``window`` of ``jobs`` (each a sequence whose
        first item is an :class:`~storagelab.kernel.io.IORequest`: a station's waiting jobs), of the command
        with the shortest :meth:`access_time` at ``now``, the first of equals. The same sums as
        :meth:`access_time` per command, in one loop: a drive's command queue asks this at every dispatch.

        Two shortcuts leave the choice and every sum unchanged: the seek curve's two laws are evaluated
        here (the same expressions as :meth:`SeekCurve.__call__`), and a command whose overhead and seek
        alone are not below the best access so far is passed over before its rotational latency is worked
        out (that latency is >= 0, and adding it cannot make the sum smaller)."""
        nxt, head, overhead = self._next, self.head, self.overhead
        cylinders, capacity = self.cylinders, self.capacity
        r, w = self.read_curve, self.write_curve
        reads, writes = (r.a, r.b, r.c, r.e, r.boundary), (w.a, w.b, w.c, w.e, w.boundary)
        rate, slope, revolution = self.media_rate, self._rate_slope, self.revolution
        sqrt = math.sqrt
        best, best_t = 0, math.inf
        for i in range(window):
            io: IORequest = jobs[i][0]
            address = io.address
            if address == nxt:
                t = overhead
            else:
                d = address * cylinders // capacity - head
                if d:
                    if d < 0:
                        d = -d
                    a, b, c, e, boundary = reads if io.is_read else writes
                    t = overhead + (a + b * sqrt(d) if d < boundary else c + e * d)  # SeekCurve.__call__
                    if not t < best_t:
                        continue
                else:
                    t = overhead  # no seek
                angle = (address / ((rate + slope * address) * revolution)) % 1.0  # as angle()
                t = t + ((angle - (now + t) / revolution) % 1.0) * revolution  # + rotational_latency()
            if t < best_t:
                best, best_t = i, t
        return best

    def cylinder(self, address: int) -> int:
        """The cylinder holding byte ``address`` (linear mapping of capacity onto cylinders)."""
        if not 0 <= address < self.capacity:
            raise CapacityExceeded(
                f"{self.name}: address must be in [0, {self.capacity}) bytes, got {address}"
            )
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
            raise ValueError(
                f"{self.name}: span must be a whole number of bytes >= the IO size {size}, got {span!r}"
            )
        inner = self.media_rate + self._rate_slope * span  # B/s at the span's last byte
        inverse = (
            1 / inner
            if inner == self.media_rate
            else math.log(self.media_rate / inner) / (self.media_rate - inner)
        )
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


#: Queue disciplines a drive's command queue can be modelled with
#: (:data:`storagelab.kernel.disciplines.DISCIPLINES` names that order by the drive's own state).
COMMAND_ORDERINGS = ("fifo", "sstf", "elevator", "satf")


def command_ordering(
    value: str = "satf", *, origin: str = "device-physics", source: str = "", fitted_on: tuple[str, ...] = ()
) -> Param:
    """How a hard disk orders the commands queued on it: one physical choice for every preset whose drives
    queue commands (SCSI/SAS/FC tagged command queuing, SATA native command queuing). The default is
    ``satf``, shortest access time first (seek plus rotation), the ordering those queues exist for; a
    preset that departs from it says why (and, if the departure was chosen by trying it against published
    points, is a ``fit`` naming them)."""
    default = (
        "drives with tagged (SCSI/SAS/FC) or native (SATA) command queuing reorder the queued commands by "
        "rotational position, i.e. by access time (seek plus rotational latency): shortest access time first"
    )
    return Param(value, "choice", origin, source or default, fitted_on=fitted_on, choices=COMMAND_ORDERINGS)
