"""Workload phases: how the offered IO rate changes over a run, as a multiplier of a base rate.

A :class:`Phase` lasts ``duration_s`` seconds and scales the base IO rate by ``rate_scale`` (a
dimensionless multiplier >= 0); with ``end_scale`` set the multiplier changes linearly from
``rate_scale`` to ``end_scale`` over the phase (a ramp). A :class:`PhaseSchedule` plays phases one after
another from t = 0: e.g. a ramp-up, a steady state, and a boot or login storm laid over a window with
:meth:`PhaseSchedule.with_storm`. A driver multiplies its base arrival rate by
:meth:`PhaseSchedule.rate_scale_at` (and can thin a Poisson stream of rate ``base * max_scale``).
"""

from __future__ import annotations

import bisect
import itertools
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

__all__ = ["Phase", "PhaseSchedule", "ramp", "steady"]


def _finite(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, numbers.Real) and math.isfinite(value)


@dataclass(frozen=True)
class Phase:
    """A stretch of ``duration_s`` seconds in which the IO rate is ``rate_scale`` x the base rate.

    With ``end_scale`` (not None) the multiplier ramps linearly from ``rate_scale`` at the start of the
    phase to ``end_scale`` at its end. Multipliers are dimensionless and >= 0; ``duration_s`` > 0.
    """

    name: str
    duration_s: float
    rate_scale: float
    end_scale: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        if not _finite(self.duration_s) or self.duration_s <= 0:
            raise ValueError(
                f"phase {self.name!r}: duration_s must be a finite number of seconds > 0, "
                f"got {self.duration_s!r}"
            )
        for key in ("rate_scale", "end_scale"):
            value = getattr(self, key)
            if key == "end_scale" and value is None:
                continue
            if not _finite(value) or value < 0:
                raise ValueError(
                    f"phase {self.name!r}: {key} must be a finite multiplier >= 0, got {value!r}"
                )

    @property
    def start_scale(self) -> float:
        """Rate multiplier at the start of the phase."""
        return float(self.rate_scale)

    @property
    def final_scale(self) -> float:
        """Rate multiplier at the end of the phase (= ``rate_scale`` unless it ramps)."""
        return float(self.rate_scale if self.end_scale is None else self.end_scale)

    def scale_at(self, elapsed_s: float) -> float:
        """Rate multiplier ``elapsed_s`` seconds into the phase (linear between start and end)."""
        if self.end_scale is None:
            return float(self.rate_scale)
        return self.rate_scale + (self.end_scale - self.rate_scale) * (elapsed_s / self.duration_s)


def steady(duration_s: float, scale: float = 1.0, name: str = "steady") -> Phase:
    """A phase of constant rate multiplier ``scale`` for ``duration_s`` seconds."""
    return Phase(name, duration_s, scale)


def ramp(duration_s: float, start: float, end: float, name: str = "ramp") -> Phase:
    """A phase whose rate multiplier changes linearly from ``start`` to ``end`` over ``duration_s`` s."""
    return Phase(name, duration_s, start, end)


class PhaseSchedule:
    """Phases played back to back from t = 0 s; phase i covers ``[boundaries()[i], boundaries()[i+1])``.

    The last phase also covers t = ``duration`` (its end value), so a driver may ask at the end time.
    """

    __slots__ = ("_current", "_ends", "_pieces", "_starts", "phases")

    def __init__(self, phases: Sequence[Phase]) -> None:
        phases = tuple(phases)
        if not phases:
            raise ValueError("phases must hold at least one Phase, got none")
        for i, phase in enumerate(phases):
            if not isinstance(phase, Phase):
                raise ValueError(f"phases[{i}] must be a Phase, got {phase!r}")
        self.phases: tuple[Phase, ...] = phases
        starts, t = [], 0.0
        for phase in phases:
            starts.append(t)
            t += float(phase.duration_s)
        self._starts: list[float] = starts
        self._ends: list[float] = [*starts[1:], t]
        self._current = 0  # the phase the last scalar lookup found (sources ask in time order)
        # per phase, what a scalar lookup needs: start and end (s), the multiplier at the start, its
        # rise over the phase (None: constant) and the phase's length (s), as Phase.scale_at computes them
        self._pieces: list[tuple[float, float, float, float | None, float]] = [
            (start, end, float(p.rate_scale), None if p.end_scale is None else p.end_scale - p.rate_scale,
             p.duration_s)
            for p, start, end in zip(phases, self._starts, self._ends, strict=True)
        ]  # fmt: skip

    @property
    def duration(self) -> float:
        """Total length of the schedule (s)."""
        return self._ends[-1]

    @property
    def max_scale(self) -> float:
        """Largest rate multiplier anywhere in the schedule (the envelope for thinning)."""
        return max(max(p.start_scale, p.final_scale) for p in self.phases)

    @property
    def silent_from(self) -> float:
        """The time (s) from which the rate multiplier is 0 to the end of the schedule: the start of its
        trailing phases whose multiplier is 0 throughout (``inf`` if the last phase is not one). A
        source thinning by this schedule keeps no arrival after it."""
        t = math.inf
        for phase, start in zip(reversed(self.phases), reversed(self._starts), strict=True):
            if phase.start_scale != 0 or phase.final_scale != 0:
                break
            t = start
        return t

    def boundaries(self) -> tuple[float, ...]:
        """Phase start times and the end of the schedule (s): ``(0, t1, ..., duration)``."""
        return (*self._starts, self.duration)

    def _index(self, t: float) -> int:
        if not _finite(t) or t < 0 or t > self.duration:
            raise ValueError(f"t must be a time in [0, {self.duration}] s, got {t!r}")
        return min(bisect.bisect_right(self._starts, t) - 1, len(self.phases) - 1)

    def phase_at(self, t: float) -> Phase:
        """The phase in force at time ``t`` (s)."""
        return self.phases[self._index(t)]

    def rate_scale_at(self, t: float | np.ndarray) -> float | np.ndarray:
        """Rate multiplier at time ``t`` (s); an array of times gives an array of multipliers."""
        if isinstance(t, np.ndarray):
            times = t.astype(np.float64, copy=False)
            if times.size and (
                not np.all(np.isfinite(times)) or times.min() < 0 or times.max() > self.duration
            ):
                raise ValueError(f"t must be times in [0, {self.duration}] s, got values outside")
            starts = np.asarray(self._starts)
            i = np.minimum(np.searchsorted(starts, times, side="right") - 1, len(self.phases) - 1)
            first = np.array([p.start_scale for p in self.phases])
            last = np.array([p.final_scale for p in self.phases])
            length = np.array([float(p.duration_s) for p in self.phases])
            return first[i] + (last[i] - first[i]) * (times - starts[i]) / length[i]
        i = self._current
        start, end, first, rise, length = self._pieces[i]
        if not start <= t < end:  # another phase (or a bad t: _index says which)
            i = self._current = self._index(t)
            start, end, first, rise, length = self._pieces[i]
        # Phase.scale_at(t - start), inline: a thinned source asks once per candidate arrival
        return first if rise is None else first + rise * ((t - start) / length)

    def with_storm(
        self, start_s: float, duration_s: float, multiplier: float, name: str = "storm"
    ) -> PhaseSchedule:
        """This schedule with the rate multiplied by ``multiplier`` over ``[start_s, start_s + duration_s)``.

        Phases the window cuts are split at its edges (ramps keep their slope: the split points take the
        interpolated multiplier); the parts inside are named ``"<phase>+<name>"``. The window must lie
        within the schedule; ``multiplier`` >= 0.
        """
        if not _finite(multiplier) or multiplier < 0:
            raise ValueError(f"multiplier must be a finite number >= 0, got {multiplier!r}")
        if not _finite(duration_s) or duration_s <= 0:
            raise ValueError(f"duration_s must be a finite number of seconds > 0, got {duration_s!r}")
        if not _finite(start_s) or start_s < 0 or start_s + duration_s > self.duration:
            raise ValueError(
                f"storm window [{start_s}, {start_s + duration_s}) s must lie within [0, {self.duration}] s"
            )
        w0, w1 = float(start_s), float(start_s) + float(duration_s)
        out: list[Phase] = []
        for phase, t0, t1 in zip(self.phases, self._starts, self._ends, strict=True):
            cuts = sorted({t0, t1, *(c for c in (w0, w1) if t0 < c < t1)})
            for a, b in itertools.pairwise(cuts):
                s0, s1 = phase.scale_at(a - t0), phase.scale_at(b - t0)
                inside = w0 <= a and b <= w1
                factor = multiplier if inside else 1.0
                out.append(
                    Phase(
                        f"{phase.name}+{name}" if inside else phase.name,
                        b - a,
                        s0 * factor,
                        None if phase.end_scale is None else s1 * factor,
                    )
                )
        return PhaseSchedule(out)

    def after(self, t: float) -> PhaseSchedule:
        """This schedule from ``t`` s on, played from t = 0: the multiplier at time u of the result is
        this schedule's at ``t + u``. A phase that ``t`` cuts keeps its slope (its remaining part starts
        at the interpolated multiplier); ``t`` must lie in ``[0, duration)``."""
        if not _finite(t) or t < 0 or t >= self.duration:
            raise ValueError(f"t must be a time in [0, {self.duration}) s, got {t!r}")
        out: list[Phase] = []
        for phase, t0, t1 in zip(self.phases, self._starts, self._ends, strict=True):
            if t1 <= t:
                continue
            if t0 >= t:
                out.append(phase)
                continue
            end = None if phase.end_scale is None else phase.final_scale
            out.append(Phase(phase.name, t1 - t, phase.scale_at(t - t0), end))
        return PhaseSchedule(out)

    def to_frame(self) -> pl.DataFrame:
        """One row per phase: ``phase`` (index), ``name``, ``start_s``, ``end_s``, ``duration_s``,
        ``start_scale`` and ``end_scale`` (multipliers)."""
        return pl.DataFrame(
            {
                "phase": list(range(len(self.phases))),
                "name": [p.name for p in self.phases],
                "start_s": self._starts,
                "end_s": self._ends,
                "duration_s": [float(p.duration_s) for p in self.phases],
                "start_scale": [p.start_scale for p in self.phases],
                "end_scale": [p.final_scale for p in self.phases],
            },
            schema={
                "phase": pl.Int64,
                "name": pl.String,
                "start_s": pl.Float64,
                "end_s": pl.Float64,
                "duration_s": pl.Float64,
                "start_scale": pl.Float64,
                "end_scale": pl.Float64,
            },
        )

    def __repr__(self) -> str:
        return f"PhaseSchedule({list(self.phases)!r})"
