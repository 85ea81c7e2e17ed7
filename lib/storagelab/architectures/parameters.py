"""The parameters a preset is built from: a :class:`ParamSet` of :class:`~storagelab.provenance.Param`.

A :class:`ParamSet` records which parameters the preset read while it built its components, so a
preset that declares a number its model never uses is refused (:meth:`ParamSet.check_all_read`); it
applies overrides (validated against each parameter's unit and range, and a device preset's name against
the device catalogue), the capacity scaling of the calibration's sensitivity check
(:func:`~storagelab.provenance.capacity_scale`), the values drawn for the uncertainty analysis
(:func:`~storagelab.provenance.parameter_draw`; the uncertain parameters read are recorded inside
:func:`~storagelab.provenance.recording_uncertain`), and builds the device a parameter names
(:meth:`ParamSet.device`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import replace

from storagelab import devices
from storagelab.provenance import (
    CHOICE_UNIT,
    PRESET_UNIT,
    Param,
    current_capacity_scale,
    current_parameter_draw,
    record_uncertain,
)
from storagelab.published.units import UNITS


def _allowed(p: Param) -> str:
    """What values ``p`` accepts, in words (a device preset's parameter lists the catalogue)."""
    if p.unit == PRESET_UNIT and not p.choices:
        return "a device preset: " + ", ".join(repr(n) for n in devices.preset_names())
    return p.allowed()


def _accepts(p: Param, value: float | str) -> bool:
    """Whether ``p`` accepts ``value`` (a device preset's name must be in the catalogue)."""
    if p.unit == PRESET_UNIT and not p.choices:
        return isinstance(value, str) and value in devices.preset_names()
    return p.accepts(value)


_QUANTITY_TEXT = re.compile(r"^\s*([-+0-9.eE]+)\s*([A-Za-z%/_]+)\s*$")


def _override_value(preset: str, name: str, p: Param, value: object) -> float | str:
    """``value`` in ``p``'s unit: a number (already in that unit), ``"8 GB/s"``-style text, a
    ``(number, unit)`` pair or a :class:`Param`; raises naming the preset, parameter and what is allowed."""
    where = f"preset {preset!r}, parameter {name!r}"
    if isinstance(value, Param):
        value = (value.value, value.unit)
    if p.unit == PRESET_UNIT or (p.choices and all(isinstance(c, str) for c in p.choices)):
        out: float | str = value  # type: ignore[assignment]
    else:
        if isinstance(value, str):
            m = _QUANTITY_TEXT.match(value)
            if not m:
                raise ValueError(f"{where}: cannot read {value!r} as a quantity; give {_allowed(p)}")
            value = (float(m.group(1)), m.group(2))
        if isinstance(value, tuple):
            number, unit = value
            if unit not in UNITS:
                raise ValueError(f"{where}: unknown unit {unit!r}; give {_allowed(p)}")
            if UNITS[unit].quantity != UNITS[p.unit].quantity:
                raise ValueError(
                    f"{where}: {number} {unit} is a {UNITS[unit].quantity}, but {name} is a "
                    f"{UNITS[p.unit].quantity} (unit {p.unit!r}); give {_allowed(p)}"
                )
            value = float(number) * UNITS[unit].factor / UNITS[p.unit].factor
        out = value  # type: ignore[assignment]
        if isinstance(out, float) and p.unit == "count" and out.is_integer():
            out = int(out)
    if not _accepts(p, out):
        raise ValueError(f"{where}: {value!r} is not allowed; give {_allowed(p)}")
    return out


class ParamSet(Mapping[str, Param]):
    """The parameters a preset named ``preset`` is built from, with ``overrides`` applied (each validated
    and re-tagged ``user``). Reading a parameter (``p["name"]``) records it; :meth:`check_all_read` then
    refuses a declared parameter the preset never read. Inside :func:`capacity_scale` the
    capacity-setting parameters read are scaled, except fitted ones: a fit is held at its fitted value (the
    calibration's sensitivity check perturbs what was not fitted). Inside
    :func:`~storagelab.provenance.parameter_draw` a parameter drawn for this preset reads as the drawn value
    (validated like an override, its source saying it was drawn), unless an override set it: a user's
    override wins over a draw. Inside :func:`~storagelab.provenance.recording_uncertain` each parameter read
    that has an uncertainty is recorded as declared (with overrides, before a draw)."""

    def __init__(
        self,
        preset: str,
        params: Mapping[str, Param],
        overrides: Mapping[str, object] | None = None,
        *,
        family: str | None = None,
    ) -> None:
        self.preset = preset
        #: The name the uncertainty analysis keys this preset's parameters by, ``(family, parameter)``:
        #: the presets of one system in several configurations (host paths, X-Bricks, a cache in front)
        #: share it, so that a scenario building two of them draws one value of each physical unknown
        #: they share (a parameter read in both with two distributions is refused). Default: ``preset``.
        self.family = family or preset
        self._params = dict(params)
        self._defaults = dict(params)  # as the preset declares them, before overrides
        self._read: set[str] = set()
        self.scale = current_capacity_scale()
        for name, p in self._params.items():
            if not _accepts(p, p.value):
                raise ValueError(
                    f"preset {preset!r}, parameter {name!r}: {p.value!r} is not allowed; give {_allowed(p)}"
                )
        for name, value in (overrides or {}).items():
            if name not in self._params:
                raise ValueError(
                    f"preset {preset!r} has no parameter {name!r}; its parameters: {', '.join(self._params)}"
                )
            p = self._params[name]
            new = _override_value(preset, name, p, value)
            was = repr(p.value) if p.unit in (PRESET_UNIT, CHOICE_UNIT) else f"{p.value} {p.unit}"
            self._params[name] = replace(
                p, value=new, origin="user", source=f"set when the preset was built (was {was}, {p.origin})",
                fitted_on=(), uncertainty=None, prior=None,
            )  # fmt: skip
        self._undrawn = dict(self._params)  # with overrides, before a draw: what a recording records
        for (drawn_preset, name), value in current_parameter_draw().items():
            if drawn_preset != self.family or name not in self._params or name in (overrides or {}):
                continue
            p = self._params[name]
            if p.uncertainty is None and p.prior is None:
                continue  # not uncertain here: a family's other preset may draw a parameter this one states
            new = _override_value(preset, name, p, value)
            was = repr(p.value) if p.unit in (PRESET_UNIT, CHOICE_UNIT) else f"{p.value} {p.unit}"
            spread = p.uncertainty.describe() if p.uncertainty is not None else "no stated distribution"
            supports = [d for d in (p.uncertainty, p.prior) if d is not None]
            if supports and not any(d.contains(new) for d in supports):
                raise ValueError(
                    f"preset {preset!r}, parameter {name!r}: the drawn {new!r} lies outside its uncertainty's "
                    f"support ({' or its prior, '.join(d.describe() for d in supports)})"
                )
            self._params[name] = replace(
                p,
                value=new,
                source=f"drawn for the uncertainty analysis from {spread} (declared {was}): {p.source}",
                uncertainty=None,
                prior=None,
            )

    def __getitem__(self, name: str) -> Param:
        try:
            p = self._params[name]
        except KeyError:
            raise KeyError(f"preset {self.preset!r} declares no parameter {name!r}") from None
        self._read.add(name)
        record_uncertain(self.family, name, self._undrawn[name])
        if self.scale != 1.0 and p.capacity in ("rate", "time") and p.origin != "fit":
            f = self.scale if p.capacity == "rate" else 1 / self.scale
            value = p.value * f
            if p.unit == "count":
                value = max(1, round(value))
            return replace(p, value=value, low=None, high=None, choices=(), uncertainty=None, prior=None)
        return p

    def __iter__(self) -> Iterator[str]:
        return iter(self._params)

    def __len__(self) -> int:
        return len(self._params)

    def declared(self) -> dict[str, Param]:
        """The parameters as declared (with overrides), without recording a read or scaling."""
        return dict(self._params)

    def device(self, name: str) -> object:
        """A fresh device of the preset named by parameter ``name`` (a :data:`PRESET_UNIT` parameter),
        its service times divided by the capacity scale when ``name`` is capacity-setting."""
        p = self[name]
        if p.unit != PRESET_UNIT:
            raise TypeError(f"preset {self.preset!r}: parameter {name!r} is not a device preset's name")
        model = devices.preset(str(p.value))
        if self.scale != 1.0 and p.capacity == "device" and p.origin != "fit":
            return devices.ScaledDevice(model, 1 / self.scale)
        return model

    def device_label(self, name: str, default_label: str) -> str:
        """What a component built from the device of parameter ``name`` is called: ``default_label`` (the
        preset's own word for its default device, e.g. ``"NL-SAS"``) while that parameter holds the
        preset's default device, the device preset's name (``"15K FC/SAS"``) when it was overridden."""
        p = self[name]
        if p.unit != PRESET_UNIT:
            raise TypeError(f"preset {self.preset!r}: parameter {name!r} is not a device preset's name")
        return default_label if p.value == self._defaults[name].value else str(p.value)

    def unread(self) -> list[str]:
        """Declared parameters the preset has not read."""
        return [k for k in self._params if k not in self._read]

    def check_all_read(self) -> None:
        """Raise if the preset declared a parameter its model never read."""
        unread = self.unread()
        if unread:
            raise ValueError(
                f"preset {self.preset!r} declares parameters its model never reads: {', '.join(unread)}; "
                "use them or remove them (a parameter table must show only what the model uses)"
            )

    def capacity_params(self) -> list[str]:
        """The names of the capacity-setting parameters scaled by :func:`capacity_scale` (fitted ones are
        held)."""
        return [k for k, p in self._params.items() if p.capacity and p.origin != "fit"]
