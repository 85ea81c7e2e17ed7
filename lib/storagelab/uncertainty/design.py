"""The draws of a scenario's uncertain parameters: a scrambled Sobol' design (:func:`sobol_design`) for
the propagation, or a Morris design (:func:`morris_design`) for screening.

Both work in the unit cube: each uncertain parameter is one dimension, a point's coordinate ``u`` in it is
a quantile, and the parameter's value is its distribution's ``ppf(u)`` (a Choice maps ``u`` through its
weights). The parameters are keyed ``(preset, parameter)``, as
:func:`storagelab.provenance.recording_uncertain` records them, and each draw is a dict for
:func:`storagelab.provenance.parameter_draw`. The dimensions run in the keys' sorted order, so the draws
do not depend on the order a scenario happened to read its parameters in.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from scipy.stats import qmc

from storagelab.uncertainty.distributions import DISTRIBUTIONS, Distribution

#: A parameter of a preset: (preset name, parameter name).
Key = tuple[str, str]


class _Uncertain(Protocol):
    """What a recorded parameter offers the design: its distribution (a
    :class:`~storagelab.provenance.Param` has it)."""

    @property
    def uncertainty(self) -> Distribution | None: ...


@dataclass(frozen=True)
class Design:
    """``n`` draws of the parameters ``keys``: ``u`` is the points in the unit cube (``n`` rows, one column
    per key, in the order of ``keys``), ``draws`` the parameter values at them (one dict per row, for
    :func:`storagelab.provenance.parameter_draw`, values in each parameter's unit). ``kind`` is ``"sobol"``
    or ``"morris"`` (:func:`storagelab.uncertainty.sensitivity.sensitivity` reads each its own way);
    ``levels`` is a Morris design's grid levels (0 for Sobol'); ``seed`` the seed it was drawn with."""

    keys: tuple[Key, ...]
    distributions: tuple[Distribution, ...]
    u: np.ndarray = field(compare=False, repr=False)
    draws: tuple[dict[Key, float | str], ...]
    kind: str
    seed: int
    levels: int = 0

    def __len__(self) -> int:
        return len(self.draws)


def _distributions(
    uncertain: Mapping[Key, _Uncertain | Distribution],
) -> tuple[tuple[Key, ...], tuple[Distribution, ...]]:
    """The keys in sorted order and each one's distribution (a recorded Param's ``uncertainty``)."""
    keys = tuple(sorted(uncertain))
    dists = []
    for key in keys:
        item = uncertain[key]
        dist = item if isinstance(item, DISTRIBUTIONS) else getattr(item, "uncertainty", None)
        if not isinstance(dist, DISTRIBUTIONS):
            raise ValueError(f"parameter {key!r} has no uncertainty to draw from (got {item!r})")
        dists.append(dist)
    return keys, tuple(dists)


def _draws(
    keys: tuple[Key, ...], dists: tuple[Distribution, ...], u: np.ndarray
) -> tuple[dict[Key, float | str], ...]:
    return tuple(
        {key: dist.ppf(float(q)) for key, dist, q in zip(keys, dists, row, strict=True)} for row in u
    )


def sobol_design(uncertain: Mapping[Key, _Uncertain | Distribution], n: int, seed: int) -> Design:
    """``n`` draws of the parameters ``uncertain`` (``{(preset, parameter): Param}`` as
    :func:`~storagelab.provenance.recording_uncertain` records them, or ``{key: distribution}``) from a
    scrambled Sobol' sequence (:class:`scipy.stats.qmc.Sobol`, its scrambling seeded by ``seed``: the same
    seed gives the same draws in any process). ``n`` a power of two keeps the sequence's balance (each
    dimension's ``n`` quantiles fall one in each of ``n`` equal slices); any other ``n`` takes the
    sequence's first ``n`` points. With no uncertain parameter, every draw is empty."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"a design needs a whole number of draws >= 1, got {n!r}")
    keys, dists = _distributions(uncertain)
    if not keys:
        u = np.empty((n, 0))
    else:
        sampler = qmc.Sobol(d=len(keys), scramble=True, rng=np.random.default_rng(seed))
        with warnings.catch_warnings():
            # "The balance properties of Sobol' points require n to be a power of 2": said in the docstring
            warnings.filterwarnings("ignore", message=".*balance properties.*", category=UserWarning)
            u = sampler.random(n)
    return Design(keys, dists, u, _draws(keys, dists, u), "sobol", seed)


def morris_design(
    uncertain: Mapping[Key, _Uncertain | Distribution], trajectories: int, seed: int, levels: int = 4
) -> Design:
    """A Morris design (SALib's sampler, seeded by ``seed``) of ``trajectories`` one-at-a-time paths
    through a grid of ``levels`` quantiles per parameter: ``trajectories * (k + 1)`` draws for ``k``
    parameters. Its points sit on the grid, so it screens (elementary effects) but is no sample for
    predictive intervals; see :func:`storagelab.uncertainty.sensitivity.sensitivity` for when to afford it."""
    from SALib.sample import morris

    keys, dists = _distributions(uncertain)
    if not keys:
        raise ValueError("a Morris design needs at least one uncertain parameter")
    if trajectories < 2:
        raise ValueError(f"a Morris design needs at least 2 trajectories, got {trajectories!r}")
    problem = {
        "num_vars": len(keys),
        "names": [f"{p}.{n}" for p, n in keys],
        "bounds": [[0.0, 1.0]] * len(keys),
    }
    u = morris.sample(problem, trajectories, num_levels=levels, seed=seed)
    return Design(keys, dists, u, _draws(keys, dists, u), "morris", seed, levels)
