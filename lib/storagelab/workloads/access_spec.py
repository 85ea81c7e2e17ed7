"""Iometer access specifications: what one worker's IOs look like, and a vectorized sampler for them.

An access spec is Iometer's description of a synthetic workload: a mix of transfer sizes (each with the
share of IOs it gets), the read share, the random share, the alignment of addresses, bursts (IOs per
burst and the delay between bursts) and the number of outstanding IOs per worker (queue depth). The
spec says nothing about *when* IOs are issued beyond bursts and queue depth; a driver component turns
it into timed :class:`storagelab.kernel.io.IORequest` objects, drawing their op, size and address in
blocks from :meth:`AccessSpec.sampler`.

Units: sizes, addresses and alignment in bytes; ``burst_delay`` in seconds; percentages 0..100 as in
Iometer's dialog (the only place percentages rather than fractions appear, because that is how specs
are written and published).

Size strings follow Iometer's convention, binary multiples: ``K`` = 1024, ``M`` = 1024**2,
``G`` = 1024**3, with optional ``B``/``iB`` (``"4K"``, ``"4KB"``, ``"4KiB"``, ``"1M"``, ``"512"``,
``"512B"``; case-insensitive; whole numbers only). pydantic's ``ByteSize`` is not used because it reads
``"4K"``/``"4KB"`` as 4000 bytes (SI), which would silently change every published Iometer spec.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator

from storagelab.input_files import InputFileError, read_yaml
from storagelab.workloads.locality import Locality, Uniform

__all__ = [
    "IOMETER_4K_70_30_RANDOM",
    "IOMETER_WEB_SERVER",
    "AccessSampler",
    "AccessSpec",
    "AccessSpecError",
    "SizeShare",
    "load_access_specs",
    "parse_size",
]

#: Exactly the Iometer size forms: digits, optional space, optional K/M/G with optional B or iB, or B.
_SIZE_RE = re.compile(r"^\s*(\d+)\s*(?:([KMG])(?:I?B)?|B)?\s*$", re.IGNORECASE)
_MULTIPLIER = {None: 1, "K": 1024, "M": 1024**2, "G": 1024**3}
_SIZE_FORMS = "a whole number of bytes or a string like '512', '4K', '64KiB', '1M' (K = 1024)"


def parse_size(value: Any) -> int:
    """A transfer size or alignment in bytes from an int or an Iometer size string (K = 1024 bytes).

    Raises ``ValueError`` naming the value and the allowed forms; the result is always > 0.
    """
    if isinstance(value, bool):
        raise ValueError(f"size {value!r} is not a size; use {_SIZE_FORMS}")
    if isinstance(value, numbers.Integral):
        size = int(value)
    elif isinstance(value, str):
        match = _SIZE_RE.match(value)
        if match is None:
            raise ValueError(f"size {value!r} is not a size; use {_SIZE_FORMS}")
        size = int(match.group(1)) * _MULTIPLIER[match.group(2).upper() if match.group(2) else None]
    else:
        raise ValueError(f"size {value!r} is not a size; use {_SIZE_FORMS}")
    if size <= 0:
        raise ValueError(f"size must be > 0 bytes, got {value!r}")
    return size


#: A size in bytes, given as an int or an Iometer size string.
SizeBytes = Annotated[int, BeforeValidator(parse_size)]


class SizeShare(BaseModel):
    """One line of a size mix: transfers of ``size`` bytes make up ``pct`` % of the spec's IOs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    size: SizeBytes
    pct: float = Field(gt=0, le=100)


class AccessSpec(BaseModel):
    """An Iometer access specification (one worker's workload).

    ``sizes`` is the transfer-size mix (shares in % of IOs, summing to 100); ``read_pct`` and
    ``random_pct`` are the % of IOs that are reads and that are random (the rest sequential); ``align``
    (bytes) is the boundary addresses are aligned to; ``burst_length`` IOs are issued back to back, then
    the worker waits ``burst_delay`` seconds; ``queue_depth`` is the number of outstanding IOs per worker
    (Iometer's "# of outstanding I/Os", default 1 as in Iometer).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    sizes: tuple[SizeShare, ...]
    read_pct: float = Field(ge=0, le=100)
    random_pct: float = Field(ge=0, le=100)
    align: SizeBytes = 512
    burst_length: int = Field(default=1, ge=1)
    burst_delay: float = Field(default=0.0, ge=0)
    queue_depth: int = Field(default=1, ge=1)

    @field_validator("sizes")
    @classmethod
    def _check_mix(cls, sizes: tuple[SizeShare, ...]) -> tuple[SizeShare, ...]:
        if not sizes:
            raise ValueError("must list at least one {size, pct} entry")
        seen: set[int] = set()
        for share in sizes:
            if share.size in seen:
                raise ValueError(f"size {share.size} B appears more than once; give each size one share")
            seen.add(share.size)
        total = sum(share.pct for share in sizes)
        if abs(total - 100.0) > 1e-6:
            raise ValueError(f"percentages sum to {round(total, 6)}, must sum to 100")
        return sizes

    @property
    def mean_size(self) -> float:
        """Mean transfer size (bytes) over the mix: sum of size * pct / 100."""
        return sum(s.size * s.pct for s in self.sizes) / 100.0

    @property
    def max_size(self) -> int:
        """Largest transfer size in the mix (bytes)."""
        return max(s.size for s in self.sizes)

    @classmethod
    def from_fio(cls, path: str | Path, job: str | None = None) -> AccessSpec:
        """The access spec of a fio job file's job (``job``: its section name; needed when the file has
        several). Workers, span, locality and rate are in :func:`storagelab.workloads.fio.read_fio_jobs`."""
        from storagelab.workloads.fio import FioJobError, read_fio_jobs

        jobs = read_fio_jobs(path)
        if job is None:
            if len(jobs) > 1:
                raise FioJobError(
                    f"{path}: {len(jobs)} jobs ({', '.join(j.name for j in jobs)}); name one with job="
                )
            return jobs[0].spec
        for j in jobs:
            if j.name == job:
                return j.spec
        raise FioJobError(f"{path}: no job [{job}]; jobs: {', '.join(j.name for j in jobs)}")

    def to_fio(self, **options: Any) -> str:
        """This spec as a fio job file (text) to run the same workload on real hardware; ``options`` as
        :func:`storagelab.workloads.fio.to_fio` (filename, size, runtime_s, numjobs, rate_iops, ...)."""
        from storagelab.workloads.fio import to_fio

        return to_fio(self, **options)

    def sampler(self, rng: np.random.Generator, span: int, locality: Locality | None = None) -> AccessSampler:
        """A sampler drawing this spec's IOs over ``[0, span)`` bytes; random IOs placed by ``locality``
        (default :class:`~storagelab.workloads.locality.Uniform`)."""
        return AccessSampler(self, rng, span, locality)


class AccessSampler:
    """Draws the IOs of one worker running an :class:`AccessSpec` over a volume of ``span`` bytes.

    Each IO is a read with probability ``read_pct``/100, has a size drawn from the mix, and is random
    with probability ``random_pct``/100. A random IO's address comes from the locality model, moved back
    to the last aligned address where the IO still fits (``<= span - size``) when it would run past the
    end. A sequential IO starts where the previous IO (random or sequential, in this block or the last
    one) ended, rounded up to ``align`` (no change when sizes are multiples of ``align``, as in all
    standard Iometer specs; rounding down would make e.g. 512 B IOs at 4 KiB alignment re-read the same
    block forever); when it would run past the end of the span it starts again at 0. The first sequential
    IO of a fresh sampler starts at 0.

    ``next_block(n)`` draws ``n`` IOs in a handful of numpy calls; the only Python loop is over the
    wraps at the end of the span (one per ``span / run length`` IOs).
    """

    __slots__ = (
        "_advance",
        "_align",
        "_cdf",
        "_last_start",
        "_locality",
        "_next",
        "_p_random",
        "_p_read",
        "_rng",
        "_sizes",
        "_span",
        "spec",
    )

    def __init__(
        self, spec: AccessSpec, rng: np.random.Generator, span: int, locality: Locality | None = None
    ) -> None:
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        if isinstance(span, bool) or not isinstance(span, numbers.Integral) or span < spec.max_size:
            raise ValueError(
                f"span must be an integer number of bytes >= the largest transfer size "
                f"({spec.max_size} B) of spec {spec.name!r}, got {span!r}"
            )
        if locality is not None and not isinstance(locality, Locality):
            raise ValueError(f"locality must have an offsets(rng, n, span, align) method, got {locality!r}")
        self.spec = spec
        self._rng = rng
        self._span = int(span)
        self._align = align = spec.align
        self._locality = Uniform() if locality is None else locality
        self._sizes = sizes = np.array([s.size for s in spec.sizes], dtype=np.int64)
        pct = np.array([s.pct for s in spec.sizes], dtype=np.float64)
        cdf = np.cumsum(pct) / pct.sum()
        cdf[-1] = 1.0  # uniform draws are < 1, so searchsorted never runs past the last size
        self._cdf = cdf
        self._advance = -(-sizes // align) * align  # distance to the next sequential start, bytes
        self._last_start = (self._span - sizes) // align * align  # last aligned start that fits, bytes
        self._p_read = spec.read_pct / 100.0
        self._p_random = spec.random_pct / 100.0
        self._next = 0

    @property
    def span(self) -> int:
        """Size (bytes) of the address range IOs are drawn in: ``[0, span)``."""
        return self._span

    @property
    def position(self) -> int:
        """Where the next sequential IO would start (bytes) before the wrap check."""
        return self._next

    def _bernoulli(self, p: float, n: int) -> np.ndarray:
        if p >= 1.0:
            return np.ones(n, dtype=bool)
        if p <= 0.0:
            return np.zeros(n, dtype=bool)
        return self._rng.random(n) < p

    def next_block(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The next ``n`` IOs as ``(is_read: bool[n], size: int64[n] bytes, address: int64[n] bytes)``."""
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
            raise ValueError(f"n (number of IOs) must be an integer >= 0, got {n!r}")
        n = int(n)
        rng = self._rng
        is_read = self._bernoulli(self._p_read, n)
        if self._sizes.size == 1:
            idx = np.zeros(n, dtype=np.intp)
        else:
            idx = np.searchsorted(self._cdf, rng.random(n), side="right")
        size = self._sizes[idx]
        is_random = self._bernoulli(self._p_random, n)
        if n == 0:
            return is_read, size, np.zeros(0, dtype=np.int64)

        address = np.zeros(n, dtype=np.int64)
        ridx = np.flatnonzero(is_random)
        if ridx.size:
            offsets = np.asarray(self._locality.offsets(rng, int(ridx.size), self._span, self._align))
            address[ridx] = np.minimum(offsets.astype(np.int64, copy=False), self._last_start[idx[ridx]])
        if ridx.size < n:
            address = self._sequential(address, idx, size, is_random, ridx)
        self._next = int(address[-1] + self._advance[idx[-1]])
        return is_read, size, address

    def _sequential(
        self, address: np.ndarray, idx: np.ndarray, size: np.ndarray, is_random: np.ndarray, ridx: np.ndarray
    ) -> np.ndarray:
        """Addresses of the sequential IOs, given those of the random ones.

        Every IO after a random IO (or after the start of the block) continues the run it anchors:
        ``start_i = anchor_start + sum(advance[anchor..i-1])``, one cumulative sum for the whole block.
        Runs that pass the end of the span are restarted at 0; with ``q_i = excl_i + size_i``
        non-decreasing, each restart's next wrap is one ``searchsorted``.
        """
        n, span = address.size, self._span
        advance = self._advance[idx]
        excl = np.cumsum(advance) - advance  # sum of advances before IO i
        run = np.cumsum(is_random)  # run id: 0 continues the previous block, k starts at ridx[k-1]
        run_base = np.empty(ridx.size + 1, dtype=np.int64)
        run_base[0] = self._next
        run_base[1:] = address[ridx] - excl[ridx]
        start = run_base[run] + excl  # equals address[i] at random IOs
        wraps = np.flatnonzero(~is_random & (start + size > span))
        if wraps.size:
            q = excl + size
            while wraps.size:
                j = int(wraps[0])
                k_next_random = int(np.searchsorted(ridx, j))
                end = int(ridx[k_next_random]) if k_next_random < ridx.size else n
                while True:
                    k = int(np.searchsorted(q, excl[j] + span, side="right"))
                    stop = min(k, end)
                    start[j:stop] = excl[j:stop] - excl[j]
                    if k >= end:
                        break
                    j = k
                wraps = wraps[wraps >= end]
        return start


class AccessSpecError(InputFileError):
    """An access-spec file that cannot be read; the message names the file, the spec, the key and what
    is allowed."""


_FIELDS = tuple(AccessSpec.model_fields)
_SHARE_FIELDS = tuple(SizeShare.model_fields)
_BOUNDS = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}
_FORMS = (
    "expected one spec (a mapping with keys such as 'name' and 'sizes'), a list of specs, "
    "or a mapping of spec name -> spec"
)


def _key(loc: tuple[int | str, ...]) -> str:
    key = ""
    for part in loc:
        key += f"[{part}]" if isinstance(part, int) else (f".{part}" if key else str(part))
    return key or "(spec)"


def _explain(error: Mapping[str, Any]) -> str:
    kind, ctx, got = error["type"], error.get("ctx") or {}, error.get("input")
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    if kind == "extra_forbidden":
        allowed = _SHARE_FIELDS if len(error["loc"]) > 1 else _FIELDS
        return f"unknown key; allowed keys: {', '.join(allowed)}"
    if kind == "missing":
        return "required key is missing"
    if kind in _BOUNDS:
        bound = next(iter(ctx.values()))
        shown = f"{bound:g}" if isinstance(bound, int | float) else bound
        return f"must be {_BOUNDS[kind]} {shown}, got {got!r}"
    return f"{error['msg']}, got {got!r}"


def _entries(data: Any, where: str) -> list[tuple[str, Any]]:
    """(label, spec body) for every spec in a parsed file, whichever of the three forms it uses."""
    if isinstance(data, Mapping) and any(key in _FIELDS for key in data):
        label = data.get("name")
        return [(repr(label) if isinstance(label, str) else "#1", data)]
    if isinstance(data, list) and data:
        out = []
        for i, body in enumerate(data, start=1):
            name = body.get("name") if isinstance(body, Mapping) else None
            label = repr(name) if isinstance(name, str) else f"#{i}"
            if not isinstance(body, Mapping):
                raise AccessSpecError(f"{where}: spec {label}: must be a mapping of keys, got {body!r}")
            out.append((label, body))
        return out
    if isinstance(data, Mapping) and data:
        out = []
        for name, body in data.items():
            if not isinstance(name, str):
                raise AccessSpecError(f"{where}: spec name {name!r} must be a string")
            if not isinstance(body, Mapping):
                raise AccessSpecError(f"{where}: spec {name!r}: must be a mapping of keys, got {body!r}")
            if "name" in body and body["name"] != name:
                raise AccessSpecError(
                    f"{where}: spec {name!r}, key 'name': {body['name']!r} differs from the mapping key; "
                    "omit it or make them equal"
                )
            out.append((repr(name), {"name": name, **body}))
        return out
    raise AccessSpecError(f"{where}: holds no access spec; {_FORMS}")


def load_access_specs(path: str | Path) -> dict[str, AccessSpec]:
    """The access specs in a YAML file, by name.

    The file holds one spec (a mapping with the :class:`AccessSpec` keys), a list of specs, or a mapping
    of spec name -> spec (whose ``name`` key may be omitted). Raises :class:`AccessSpecError` naming
    the file, the spec, the key and what is allowed.
    """
    where = str(path)
    data = read_yaml(path, AccessSpecError, "no such file")
    specs: dict[str, AccessSpec] = {}
    for label, body in _entries(data, where):
        try:
            spec = AccessSpec.model_validate(body)
        except ValidationError as exc:
            problems = [f"{where}: spec {label}, key {_key(e['loc'])!r}: {_explain(e)}" for e in exc.errors()]
            raise AccessSpecError("\n".join(problems)) from None
        if spec.name in specs:
            raise AccessSpecError(
                f"{where}: spec {spec.name!r}, key 'name': defined twice; names must be unique"
            )
        specs[spec.name] = spec
    return specs


#: Iometer's web-server access spec as run in the ESG Lab validation of the IBM DS5020 (appendix,
#: Figure 18): 100 % reads, 100 % random, sector-aligned; shares as in datasets/ds5020.csv rows
#: ``ds5020-web-mix-*`` (metric ``size_mix_share``).
IOMETER_WEB_SERVER = AccessSpec(
    name="Iometer web server",
    sizes=(
        SizeShare(size=512, pct=22),
        SizeShare(size=1024, pct=15),
        SizeShare(size=2048, pct=8),
        SizeShare(size=4096, pct=23),
        SizeShare(size=8192, pct=15),
        SizeShare(size=16384, pct=2),
        SizeShare(size=32768, pct=6),
        SizeShare(size=65536, pct=7),
        SizeShare(size=131072, pct=1),
        SizeShare(size=524288, pct=1),
    ),
    read_pct=100,
    random_pct=100,
    align=512,
)

#: The Virtual SAN 5.5 reference-architecture workload: Iometer 4 KiB, 70 % read, 100 % random, one
#: outstanding IO per worker (datasets/vsan.csv, workload "Iometer 4K 70/30 random QD1"). The source
#: does not state the alignment, so Iometer's default (sector boundaries, 512 B) is kept.
IOMETER_4K_70_30_RANDOM = AccessSpec(
    name="Iometer 4K 70/30 random QD1",
    sizes=(SizeShare(size=4096, pct=100),),
    read_pct=70,
    random_pct=100,
    align=512,
    queue_depth=1,
)
