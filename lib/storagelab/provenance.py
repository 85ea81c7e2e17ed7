"""Provenance of model parameters: a :class:`Param` is a number (or a device preset's name) with its unit,
where it comes from, and what it may be. The set of parameters a preset is built from (overrides,
reads, capacity scaling, device presets) is :class:`storagelab.architectures.parameters.ParamSet`.

Origins (:data:`ORIGINS`):

- ``document`` — stated in one of the source studies (``source`` names the file and the place);
- ``device-physics`` — follows from how the device or link works (8b/10b encoding, framing overhead);
- ``datasheet`` — a manufacturer's datasheet or manual named in ``source``;
- ``fit`` — fitted to published points; ``fitted_on`` names them (``datasets/`` row ids). A value chosen
  by trying it against a published number is a fit, and that number is then not a prediction;
- ``assumption`` — stated by no source: ``source`` says what was assumed and on what evidence (a value
  recalled from memory rather than read in a document or datasheet is an assumption);
- ``user`` — an override given when the preset was built.

:func:`capacity_scale` sets the factor by which presets built inside it scale their capacity-setting
parameters (the calibration's sensitivity check).

A parameter whose value is uncertain carries its distribution (``uncertainty``, one of
:mod:`storagelab.uncertainty.distributions`). :func:`recording_uncertain` collects the uncertain parameters
the presets built inside it read (to discover a scenario's by running it once), and :func:`parameter_draw`
gives presets built inside it drawn values for them (:mod:`storagelab.uncertainty` says how a study uses the
two).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from storagelab.published.units import UNITS, to_si
from storagelab.uncertainty.distributions import DISTRIBUTIONS, Choice, Distribution

ORIGINS = ("document", "device-physics", "datasheet", "fit", "assumption", "user")

#: The unit of a parameter whose value is a device preset's name (``storagelab.devices.preset_names()``).
PRESET_UNIT = "preset"

#: The unit of a parameter whose value is a modelling choice named by a string (a queue discipline, a
#: hit-ratio method, a placement rule): its ``choices`` list what the model supports.
CHOICE_UNIT = "choice"

#: How a parameter sets a preset's capacity: a ``rate`` (bandwidth, IOPS) grows with capacity, a ``time``
#: (service, processing) shrinks, a ``device`` preset's service times shrink.
CAPACITY_KINDS = ("rate", "time", "device")


@dataclass(frozen=True)
class Param:
    """One model parameter: ``value`` in ``unit`` (a :data:`storagelab.published.units.UNITS` symbol,
    :data:`PRESET_UNIT` for a device preset's name, or :data:`CHOICE_UNIT` for a modelling choice named
    in ``choices``), its ``origin`` (one of :data:`ORIGINS`) and its
    ``source`` (the document, datasheet, fit or reasoning it comes from).

    ``fitted_on``: for a fit, the published points (``datasets/`` row ids) it was fitted on.
    ``choices``: the allowed values, when only some are (a name, or a count the model supports);
    ``low``/``high``: the allowed range in ``unit`` (by default counts are whole numbers >= 1, ratios lie
    in [0, 1], percentages in [0, 100], everything else is > 0). ``capacity``: one of
    :data:`CAPACITY_KINDS` when the parameter sets the preset's capacity, else empty.
    ``si`` is the value in SI units (s, B, B/s, 1/s, count).

    ``uncertainty``: the distribution the value may be drawn from in the uncertainty analysis (a
    :class:`~storagelab.uncertainty.distributions.Uniform`, ``LogUniform``, ``Triangular`` or ``Choice``, its
    numbers in ``unit``), or None for a value taken as exact (a document's stated value, a user's override).
    ``source`` says why those bounds. The rule: the declared ``value`` lies in the uncertainty's support, and
    so does every value it can draw lie in what the parameter accepts (both ends of a range, every value of a
    Choice); a parameter whose value is a name or a count (:data:`PRESET_UNIT`, :data:`CHOICE_UNIT`,
    ``count``) takes a ``Choice``. A Param breaking the rule is refused with the reason.

    ``prior``: for a fit only, the distribution its evidence allows *without* the rows it was fitted on (the
    range the fit searched, with its reason in ``source``), under the same rule. A claim on one of those rows
    is predicted from it (leave-one-out: the fit cannot see the claim it is scored on); every other claim
    draws from ``uncertainty``, the fit's own spread from its rows.

    ``history``: the parameter says what happened to the system before a measurement (how long its caches
    had run since they were cleared), not what the hardware is. Its ``uncertainty`` is the range a test's
    unstated history leaves open, and its declared ``value`` is the steady state (a warm cache). A study's
    scenario sets it from that test's protocol; a sizing comparison, which asks what a system in service
    sustains, takes the declared steady state and does not draw it
    (:func:`storagelab.analysis.decision.uncertain_parameters`). An override (a scenario's, a user's)
    has no uncertainty, so there is nothing to draw either way."""

    value: float | str
    unit: str
    origin: str
    source: str
    fitted_on: tuple[str, ...] = ()
    choices: tuple[float | str, ...] = ()
    low: float | None = None
    high: float | None = None
    capacity: str = ""
    uncertainty: Distribution | None = None
    prior: Distribution | None = None
    history: bool = False

    def __post_init__(self) -> None:
        if self.unit == PRESET_UNIT:
            if not isinstance(self.value, str) or not self.value:
                raise ValueError(f"a {PRESET_UNIT!r} Param names a device preset, got {self.value!r}")
        elif self.unit == CHOICE_UNIT:
            if not self.choices or not all(isinstance(c, str) for c in self.choices):
                raise ValueError(f"a {CHOICE_UNIT!r} Param lists its choices as strings ({self.source!r})")
            if self.value not in self.choices:
                raise ValueError(
                    f"a {CHOICE_UNIT!r} Param's value must be one of {self.choices}, got {self.value!r}"
                )
        elif (
            isinstance(self.value, bool)
            or not isinstance(self.value, int | float)
            or not math.isfinite(self.value)
        ):
            raise ValueError(f"Param value must be a finite number, got {self.value!r}")
        if self.unit not in (PRESET_UNIT, CHOICE_UNIT) and self.unit not in UNITS:
            raise ValueError(f"Param unit {self.unit!r} is not a known unit; known: {', '.join(UNITS)}")
        if self.origin not in ORIGINS:
            raise ValueError(f"Param origin {self.origin!r} is not allowed; allowed: {', '.join(ORIGINS)}")
        if not isinstance(self.source, str) or not self.source.strip():
            raise ValueError("Param source must say where the value comes from (a non-empty string)")
        if self.origin == "fit" and not self.fitted_on:
            raise ValueError(
                f"a fitted Param must name the published points it was fitted on ({self.source!r})"
            )
        if self.fitted_on and self.origin != "fit":
            raise ValueError(f"fitted_on is for fitted parameters; this one's origin is {self.origin!r}")
        if self.capacity and self.capacity not in CAPACITY_KINDS:
            raise ValueError(f"Param capacity must be one of {CAPACITY_KINDS}, got {self.capacity!r}")
        if self.uncertainty is not None:
            self._check_uncertainty(self.uncertainty)
        if self.prior is not None:
            if self.origin != "fit":
                raise ValueError(
                    f"a prior is the range a fit's evidence allows without its rows; this Param's origin is "
                    f"{self.origin!r} ({self.source!r})"
                )
            self._check_uncertainty(self.prior)

    def _check_uncertainty(self, dist: Distribution) -> None:
        """Refuse an uncertainty this parameter cannot carry (see the class's rule)."""
        where = f"Param {self.value!r} {self.unit} ({self.source!r})"
        if not isinstance(dist, DISTRIBUTIONS):
            raise ValueError(
                f"{where}: uncertainty must be one of {[d.__name__ for d in DISTRIBUTIONS]}, got {dist!r}"
            )
        if self.unit in (PRESET_UNIT, CHOICE_UNIT, "count") and not isinstance(dist, Choice):
            raise ValueError(
                f"{where}: a {self.unit!r} parameter's uncertainty is a Choice of its values, got {dist.describe()}"
            )
        if not dist.contains(self.value):
            raise ValueError(
                f"{where}: the value lies outside its uncertainty's support ({dist.describe()}); "
                "the declared value must be one the stated distribution can draw"
            )
        ends = dist.values if isinstance(dist, Choice) else dist.bounds
        refused = [v for v in ends if not self.accepts(v)]
        if refused:
            raise ValueError(
                f"{where}: its uncertainty ({dist.describe()}) can draw {refused[0]!r}, which the parameter "
                f"does not accept; it accepts {self.allowed()}"
            )

    @property
    def si(self) -> float:
        """The value in SI units."""
        if self.unit in (PRESET_UNIT, CHOICE_UNIT):
            what = "a device preset's name" if self.unit == PRESET_UNIT else "a modelling choice"
            raise TypeError(f"{self.value!r} is {what}, not a number")
        return to_si(self.value, self.unit)

    def allowed(self) -> str:
        """What values this parameter accepts, in words."""
        if self.choices:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.unit == PRESET_UNIT:
            return "a device preset's name"
        low, high = self._range()
        whole = "a whole number " if self.unit == "count" else "a number "
        lo = f">= {low:g}" if self.low is not None or self.unit in ("count", "ratio", "%") else f"> {low:g}"
        hi = "" if math.isinf(high) else f" and <= {high:g}"
        return f"{whole}{lo}{hi} {self.unit}"

    def _range(self) -> tuple[float, float]:
        default = {"count": (1.0, math.inf), "ratio": (0.0, 1.0), "%": (0.0, 100.0)}.get(
            self.unit, (0.0, math.inf)
        )
        return (
            default[0] if self.low is None else self.low,
            default[1] if self.high is None else self.high,
        )

    def accepts(self, value: float | str) -> bool:
        """Whether ``value`` (in this parameter's unit) is allowed."""
        if self.choices:
            return value in self.choices
        if self.unit == PRESET_UNIT:
            return isinstance(value, str) and bool(value)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            return False
        low, high = self._range()
        if self.unit == "count" and value != int(value):
            return False
        strict = self.low is None and self.unit not in ("count", "ratio", "%")
        return (value > low if strict else value >= low) and value <= high


_SCALE: ContextVar[float] = ContextVar("storagelab_capacity_scale", default=1.0)

#: A parameter of a preset, as the uncertainty analysis names it: (preset name, parameter name).
ParamKey = tuple[str, str]

_RECORDING: ContextVar[dict[ParamKey, Param] | None] = ContextVar(
    "storagelab_recording_uncertain", default=None
)
_DRAW: ContextVar[dict[ParamKey, object] | None] = ContextVar("storagelab_parameter_draw", default=None)


def current_capacity_scale() -> float:
    """The factor presets built here scale their capacity by (1 outside :func:`capacity_scale`): for a
    cache of results that depend on the preset's capacity."""
    return _SCALE.get()


@contextmanager
def capacity_scale(factor: float) -> Iterator[None]:
    """Within this block, every preset built scales its capacity-setting parameters by ``factor``: rates
    times ``factor``, times and device service times divided by it. The calibration's sensitivity check
    uses 0.5 and 2; outside the block presets are built as declared."""
    if not factor > 0 or not math.isfinite(factor):
        raise ValueError(f"capacity scale must be a positive number, got {factor!r}")
    token = _SCALE.set(factor)
    try:
        yield
    finally:
        _SCALE.reset(token)


def current_recording() -> dict[ParamKey, Param] | None:
    """Where the presets built here record the uncertain parameters they read (the innermost
    :func:`recording_uncertain`'s dict), or None outside one."""
    return _RECORDING.get()


def record_uncertain(preset: str, name: str, param: Param) -> None:
    """Record that preset ``preset`` read parameter ``name`` (``param``, as declared) inside
    :func:`recording_uncertain`; nothing outside one, or when ``param`` has no uncertainty. A parameter
    read again with the same distribution is recorded once; with another, it is refused (one draw cannot
    serve two distributions)."""
    recorded = _RECORDING.get()
    if recorded is None or param.uncertainty is None:
        return
    key = (preset, name)
    before = recorded.setdefault(key, param)
    if before.uncertainty != param.uncertainty:
        raise ValueError(
            f"preset {preset!r}, parameter {name!r} was read with two uncertainties "
            f"({before.uncertainty!r} and {param.uncertainty!r}); one draw cannot serve both"
        )


@contextmanager
def recording_uncertain() -> Iterator[dict[ParamKey, Param]]:
    """Within this block, every preset built (every :class:`~storagelab.architectures.parameters.ParamSet`)
    records each parameter it reads that has an ``uncertainty``, as declared (before a draw or capacity
    scaling; a user's override has none, so it is not recorded), in the dict this yields:
    ``{(preset, parameter): Param}``. Running a scenario once inside it discovers the uncertain parameters
    that scenario's predictions rest on. A recording nested in another collects for itself only."""
    recorded: dict[ParamKey, Param] = {}
    token = _RECORDING.set(recorded)
    try:
        yield recorded
    finally:
        _RECORDING.reset(token)


def current_parameter_draw() -> dict[ParamKey, object]:
    """The drawn values presets built here read (empty outside :func:`parameter_draw`)."""
    return dict(_DRAW.get() or {})


def current_draw_key() -> tuple[tuple[ParamKey, str], ...]:
    """The current draw as a hashable key, empty outside :func:`parameter_draw`: for a cache of results
    that depend on the parameters presets are built from (like :func:`current_capacity_scale`)."""
    return tuple(sorted((k, repr(v)) for k, v in (_DRAW.get() or {}).items()))


@contextmanager
def parameter_draw(values: Mapping[ParamKey, object]) -> Iterator[None]:
    """Within this block, a preset named P built here reads its parameter N as ``values[(P, N)]`` (in the
    parameter's unit, or a quantity it can read: ``"8 GB/s"``, ``(8, "GB/s")``), validated like an override
    and re-tagged: its ``origin`` kept, its ``source`` saying it was drawn, from what, and the declared value.
    Parameters not in ``values`` read as declared; keys naming another preset or a parameter a preset does
    not declare are harmless (one draw serves a whole scenario). It composes:

    - with :func:`capacity_scale`: the drawn value is scaled like the declared one would be (fitted ones held);
    - with a user's override given when the preset is built: the override wins over the draw (the user fixed
      that parameter);
    - with an enclosing :func:`parameter_draw`: the inner one's values add to and replace the outer's."""
    draw: dict[ParamKey, object] = {}
    for key, value in values.items():
        if not (isinstance(key, tuple) and len(key) == 2 and all(isinstance(k, str) for k in key)):
            raise ValueError(f"a parameter draw is keyed by (preset, parameter) names, got {key!r}")
        draw[key] = value
    token = _DRAW.set({**(_DRAW.get() or {}), **draw})
    try:
        yield
    finally:
        _DRAW.reset(token)
