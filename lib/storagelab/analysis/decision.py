"""Decide under uncertainty (issue 69): each candidate's headroom with what the models do not know, the
rankings as probabilities, and what to measure next.

:func:`storagelab.analysis.comparison.compare` searches each architecture's headroom at its declared
parameters, in ``replications`` searches on seeds ``seed, seed + 1, ...``; its interval holds only the
simulation noise. With ``uncertainty=n`` it also searches the headroom once per draw of the uncertain
parameters (:func:`draw_design`):

- **What is drawn.** Every parameter with a stated distribution that a candidate's build and the mix's
  workloads read (found by building each candidate with the mix at 1x inside
  :func:`~storagelab.provenance.recording_uncertain`), and each mix class's size where the mix gives a
  ``size_range``; not a test's history (:attr:`~storagelab.provenance.Param.history`), which is read at
  its steady state, since the comparison is of systems in service. One scrambled Sobol' design of ``n`` points covers the union of them all, so a parameter
  two candidates read (the mix's workloads; one system's unknowns, shared by its presets through
  ``ParamSet(family=...)``: Virtual SAN at 4 and at 8 hosts) has the same value in draw ``j`` for both.
  The candidates are compared on the same draws.
- **How each draw is searched.** One search per candidate and draw, at the first replication's seed
  (common random numbers: a draw differs from that replication by its parameters alone), starting from
  that replication's final bracket (:func:`~storagelab.analysis.headroom.search_replication` with
  ``warm``: where the draw moves the headroom little, two runs confirm the bracket). A draw whose levels
  still hold at the cap (``Settings.high``) is censored there: its headroom is at least the cap.
- **The predictive sample.** On the log of the multiplier, as the calibration's
  (:func:`storagelab.uncertainty.propagation.predictive_sample`): each draw's answer moved by the
  replications' mean minus the first replication's (the draws carry that seed's noise), plus the Student-t
  noise of the replications' mean (``target="mean"``, with Welch-Satterthwaite's degrees of freedom of the
  sum): unlike a published measurement, a system's headroom is not one more noisy outcome, and the
  searches' noise is only our error in finding it. (The noise of one new search, the calibration's term,
  covered the exact headroom of the known-truth cases 85.3 % and 95.6 % of the time over six seeds, and an
  interval of one search at the true parameter 83.3 % and 92.5 %: :mod:`storagelab.verify.headroom_coverage`
  gives what the mean's covers.) Each draw is spread over the final bracket its search left the boundary
  in, a uniform of ``+-ln(hi / lo) / 2`` (:func:`with_resolution`), as the nominal interval counts the
  same resolution. Its quantiles read each draw as its slice of the distribution
  (:func:`~storagelab.uncertainty.propagation.stratified_rows`), not as a point mass.
- **The model's discrepancy.** The calibration's band (:mod:`storagelab.calibration.discrepancy`,
  learned on the studies' claims, ``discrepancy=`` a :class:`~storagelab.calibration.discrepancy.Band`),
  on the log scale, convolved with each candidate's sample. The band is a log ratio of published over
  simulated throughputs, latencies and shares; a headroom is a load multiplier, and an architecture whose
  model is a factor ``k`` optimistic about its capacity has a headroom about a factor ``k`` too high, so
  the band is used as it stands (an assumption: no published headroom exists to learn it on). Each
  candidate's discrepancy is independent of the others' (different models of different hardware): a bias
  they share (all models optimistic) would cancel in a ranking, so independence makes the rankings' odds
  nearer even, not further from it.

The outcome (:class:`Decision`): per candidate its median headroom and 80 % interval, the probability
that it meets the mix as given (headroom above 1) and at the mix's growth target, its status and the
parameter that moves its headroom most (first-order RBD-FAST index on the draws, as the calibration's
drivers); the matrix of P(headroom of A > headroom of B), exact sums over the paired draws, the noise
levels and the two bands (no Monte Carlo: the same numbers in any process); and, for the closest pair,
the parameter that decides their difference. A published curve takes no draws: its uncertainty is its
confidence band, searched at both ends in :meth:`~storagelab.analysis.comparison.Comparison.table`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from storagelab.calibration.discrepancy import Band
from storagelab.calibration.propagation import drivers
from storagelab.provenance import parameter_draw, recording_uncertain
from storagelab.uncertainty.design import Design, Key, sobol_design
from storagelab.uncertainty.distributions import Distribution, Uniform
from storagelab.uncertainty.propagation import predictive_sample, scenario_seed, stratified_rows

if TYPE_CHECKING:
    import altair as alt

    from storagelab.analysis.comparison import Candidate
    from storagelab.analysis.workload_mix import WorkloadMix

#: The preset name under which a mix class's drawn size is keyed: ``(MIX_KEY, "<class> size")``.
MIX_KEY = "workload mix"

#: The probabilities a decision table reports its interval at: a central 80 % interval.
LOW, HIGH = 0.10, 0.90


def size_key(cls: str) -> Key:
    """The design key of a mix class's size."""
    return (MIX_KEY, f"{cls} size")


def mix_at(mix: WorkloadMix, values: Mapping[Key, object]) -> WorkloadMix:
    """``mix`` with each class's size replaced by its drawn value in ``values`` (:func:`size_key`), where
    there is one."""
    classes = [
        c.model_copy(update={"size": float(values[size_key(c.name)])}) if size_key(c.name) in values else c
        for c in mix.classes
    ]
    return mix.model_copy(update={"classes": classes})


def uncertain_parameters(
    mix: WorkloadMix, candidates: Sequence[Candidate]
) -> tuple[dict[Key, Distribution], dict[str, tuple[Key, ...]]]:
    """Every uncertain parameter the ``candidates`` (those built from a preset) read with ``mix`` at 1x,
    and every mix class's size range: ``({key: distribution}, {candidate label: its keys, sorted})``.
    A mix class's size is every candidate's key. A parameter that records a test's history
    (:attr:`~storagelab.provenance.Param.history`: how long a cache had run since it was cleared) is not
    drawn: the comparison is of systems in service, so it reads the declared steady state (a user sizing
    for a cold start overrides it in the candidate's ``overrides``)."""
    from storagelab.analysis.comparison import _topology

    found: dict[Key, Distribution] = {}
    mine: dict[str, tuple[Key, ...]] = {}
    sizes = {size_key(c.name): Uniform(*c.size_range) for c in mix.classes if c.size_range is not None}
    for c in candidates:
        if c.preset is None:
            continue
        with recording_uncertain() as recorded:
            volumes, placement = _topology(c, "fit")
            mix.sources(volumes, placement, 1.0)
        drawn = {key: param for key, param in recorded.items() if not param.history}
        for key, param in drawn.items():
            found[key] = param.uncertainty  # type: ignore[assignment]  # recorded: it has one
        mine[c.label] = tuple(sorted({*drawn, *sizes}))
    return {**found, **sizes}, mine


def draw_design(
    mix: WorkloadMix, candidates: Sequence[Candidate], n: int, seed: int
) -> tuple[Design, dict[str, tuple[Key, ...]]]:
    """``n`` draws of every uncertain parameter of the comparison (:func:`uncertain_parameters`), one
    scrambled Sobol' design seeded by ``seed`` and the mix's name, and each candidate's keys."""
    found, mine = uncertain_parameters(mix, candidates)
    return sobol_design(found, n, scenario_seed(seed, "comparison", mix.name)), mine


def sub_design(design: Design, keys: Sequence[Key]) -> Design:
    """The columns ``keys`` of ``design`` (the same points): a candidate's own parameters, for its
    sensitivity."""
    index = [design.keys.index(k) for k in keys]
    return Design(
        tuple(keys),
        tuple(design.distributions[i] for i in index),
        design.u[:, index],
        tuple({k: d[k] for k in keys} for d in design.draws),
        design.kind,
        design.seed,
    )


def draw_search(
    mix: WorkloadMix, c: Candidate, s: Any, j: int, values: Mapping[Key, object], first: Any
) -> dict[str, Any]:
    """Draw ``j`` of candidate ``c``'s headroom: one search at the first replication's seed inside
    :func:`~storagelab.provenance.parameter_draw` (``values``), from ``first``'s final bracket (the first
    replication, a :class:`~storagelab.analysis.headroom.Replication`; from ``s.start`` when it ended
    without an answer). Returns ``{"draw", "answer", "status", "resolution", "evaluations"}``: ``answer`` the multiplier
    (at a bound where ``status`` is not ``"found"``; None where the mix cannot be hosted or the draw
    could not be built); ``resolution``, the answer's search resolution on the log scale (0 at a bound)."""
    from storagelab.analysis.comparison import _replication
    from storagelab.analysis.headroom import Replication

    warm = first if isinstance(first, Replication) else None
    try:
        with parameter_draw(values):
            rep = _replication(mix_at(mix, values), c, s, "fit", 0, warm)
    except ValueError as err:  # a draw the preset refuses (its parameters inconsistent): said, not hidden
        return {
            "draw": j,
            "answer": None,
            "status": f"draw refused: {err}",
            "resolution": 0.0,
            "evaluations": None,
        }
    if isinstance(rep, Replication):
        ev = pl.DataFrame(list(rep.evaluations))
        return {
            "draw": j,
            "answer": rep.answer,
            "status": "found",
            "resolution": rep.resolution,
            "evaluations": ev,
        }
    row = rep["row"]
    return {"draw": j, "answer": row["headroom"], "status": row["status"], "resolution": 0.0,
            "evaluations": rep["evaluations"]}  # fmt: skip


def _band_support(band: Band | None) -> tuple[np.ndarray, np.ndarray]:
    if band is None or band.scale == 0:
        return np.zeros(1), np.ones(1)
    return band.support()


def _weighted_quantiles(values: np.ndarray, weights: np.ndarray, ps: Sequence[float]) -> list[float]:
    order = np.argsort(values, kind="stable")
    v, w = values[order], weights[order]
    cum = np.cumsum(w) / w.sum()
    return [float(v[min(np.searchsorted(cum, p, side="left"), v.size - 1)]) for p in ps]


@dataclass
class CandidateSample:
    """One candidate's predictive sample of log headroom: ``logs`` (draws x noise levels, natural log of
    the multiplier), the discrepancy band's support (``deltas``, ``weights``), ``cap`` and ``floor`` (the
    searched bracket: a value there is a bound), the draws' ``statuses`` and ``nominal``, the headroom at
    the declared values (the replications' geometric mean, as the nominal table's; NaN if not given)."""

    label: str
    logs: np.ndarray
    deltas: np.ndarray
    weights: np.ndarray
    cap: float
    floor: float
    statuses: tuple[str, ...] = field(default=())
    nominal: float = math.nan

    def flat(self) -> tuple[np.ndarray, np.ndarray]:
        """Every value of the convolution (the draws' distribution, :func:`stratified_rows`, with the
        noise, + band) with its weight (summing to 1)."""
        logs = stratified_rows(self.logs).reshape(-1)
        sums = (logs[:, None] + self.deltas[None, :]).ravel()
        each = np.broadcast_to(self.weights[None, :] / logs.size, (logs.size, self.deltas.size)).ravel()
        return sums, each / each.sum()

    def quantiles(self, ps: Sequence[float]) -> list[float]:
        """The headroom (a multiplier) at probabilities ``ps``, within [floor, cap]."""
        sums, w = self.flat()
        return [min(self.cap, max(self.floor, math.exp(q))) for q in _weighted_quantiles(sums, w, ps)]

    def p_above(self, x: float) -> float:
        """P(headroom > ``x``). At the cap a censored draw counts as above any ``x`` below the cap."""
        sums, w = self.flat()
        return float(w[sums > math.log(x)].sum())

    def p_below_nominal(self) -> float:
        """P(headroom < the declared values' answer): where :attr:`nominal` lies in what is known. Near 1,
        the declared values sit at the optimistic end of their ranges and the nominal table reads high;
        near 0, the pessimistic end. NaN without a nominal answer, and where the nominal answer is a bound
        (at the cap or the floor: "at least" or "at most" that, not a place in the distribution)."""
        if not math.isfinite(self.nominal) or not self.floor < self.nominal < self.cap:
            return math.nan
        sums, w = self.flat()
        return float(w[sums < math.log(self.nominal)].sum())


def p_greater(a: CandidateSample, b: CandidateSample) -> float:
    """P(headroom of ``a`` > headroom of ``b``): paired on the draws (the same parameter values and mix),
    independent noise and discrepancy; exact sums; a tie counts one half (two draws both censored at one
    cap). The draws are taken as they are, not through :func:`stratified_rows`: the pairing is draw by
    draw, and each candidate's slices sort its own way."""
    if a.logs.shape[0] != b.logs.shape[0]:
        raise ValueError("p_greater: the candidates were not drawn on the same design")
    total = 0.0
    for j in range(a.logs.shape[0]):
        va = (a.logs[j][:, None] + a.deltas[None, :]).ravel()
        wa = np.broadcast_to(a.weights[None, :], (a.logs.shape[1], a.deltas.size)).ravel()
        vb = (b.logs[j][:, None] + b.deltas[None, :]).ravel()
        wb = np.broadcast_to(b.weights[None, :], (b.logs.shape[1], b.deltas.size)).ravel()
        va = np.minimum(va, math.log(a.cap))  # a censored value is "at least the cap": compared at it
        vb = np.minimum(vb, math.log(b.cap))
        order = np.argsort(vb, kind="stable")
        vb, wb = vb[order], wb[order] / wb.sum()
        cum = np.concatenate([[0.0], np.cumsum(wb)])
        below = cum[np.searchsorted(vb, va, side="left")]
        tied = cum[np.searchsorted(vb, va, side="right")] - below
        total += float(np.sum(wa * (below + tied / 2)) / wa.sum())
    # cumulative sums of weights can fall a rounding error outside [0, 1] (-2e-15 where every value of a
    # lies below every value of b): a probability is clipped to its range
    return min(1.0, max(0.0, total / a.logs.shape[0]))


#: Points at which a draw's search resolution (a uniform on the log scale) is read when it is added to the
#: draw's noise (:func:`with_resolution`).
RESOLUTION_POINTS = 8


def with_resolution(logs: np.ndarray, resolutions: Sequence[float]) -> np.ndarray:
    """Each row of ``logs`` (a draw's log headroom at the sorted noise levels) convolved with a uniform
    on ``[-r, r]``, ``r`` its draw's ``resolutions`` entry: the search's answer is its final bracket's
    geometric middle and the boundary lies anywhere in the bracket, ``r = ln(hi / lo) / 2`` either side
    (0: a bound, at the cap or the floor, or a search not bisected). The sum's values at the
    :data:`RESOLUTION_POINTS` midpoints of the uniform are sorted and read back at the row's own levels
    (every ``RESOLUTION_POINTS``-th, from the middle of the first group), so a row keeps its size."""
    out = logs.copy()
    k = RESOLUTION_POINTS
    offsets = 2 * (np.arange(k) + 0.5) / k - 1
    for i, r in enumerate(resolutions):
        if r > 0 and math.isfinite(r):
            both = np.sort((logs[i][:, None] + r * offsets[None, :]).ravel())
            out[i] = both[k // 2 :: k]
    return out


def candidate_sample(
    label: str,
    draws: Sequence[float | None],
    replications: Sequence[float],
    band: Band | None,
    low: float,
    high: float,
    statuses: Sequence[str] = (),
    resolutions: Sequence[float] = (),
) -> CandidateSample | None:
    """The predictive sample of a candidate from its draws' answers and its replications' answers
    (multipliers), or None where no draw gave an answer. A draw without an answer (cannot host, refused)
    is left out, and said in ``statuses``. ``resolutions``: each draw's search resolution on the log scale
    (its final bracket's half-width, :attr:`~storagelab.analysis.headroom.Replication.resolution`; 0 for
    a bound), added to that draw as a uniform (:func:`with_resolution`): without it a draw is read as if
    its search had found the boundary exactly, and where the replications agree to the bracket (their
    spread 0) nothing else widens the sample (the nominal interval counts the resolution:
    :func:`~storagelab.analysis.headroom.log_interval`)."""
    if resolutions and len(resolutions) != len(draws):
        raise ValueError(f"candidate_sample: {len(resolutions)} resolutions for {len(draws)} draws")
    kept = [j for j, d in enumerate(draws) if d is not None and d > 0]
    logs = predictive_sample(
        [math.log(d) if d is not None and d > 0 else None for d in draws],
        [math.log(r) for r in replications],
        math.log(replications[0]) if replications else None,
        target="mean",
    )
    n = len(kept)
    if logs.size == 0:
        return None
    rows = logs.reshape(n, -1)
    if resolutions:
        rows = with_resolution(rows, [float(resolutions[j]) for j in kept])
    deltas, weights = _band_support(band)
    nominal = (
        math.nan if not replications
        else float(replications[0]) if len(set(replications)) == 1  # as the nominal table: exact when all agree
        else math.exp(sum(math.log(r) for r in replications) / len(replications))
    )  # fmt: skip
    return CandidateSample(label, rows, deltas, weights, high, low, tuple(statuses), nominal)


@dataclass
class Decision:
    """The comparison's decision under uncertainty (module docstring): ``samples`` per candidate,
    ``design`` (the draws), ``keys`` (each candidate's parameters), ``draws`` (per candidate, its draws'
    answers and statuses), ``growth`` (the growth target, a multiplier) and the ``band`` used (None: no
    discrepancy)."""

    samples: dict[str, CandidateSample]
    design: Design
    keys: dict[str, tuple[Key, ...]]
    draws: dict[str, list[dict[str, Any]]]
    growth: float
    band: Band | None

    def _driver(self, label: str, outputs: Sequence[float], keys: Sequence[Key]) -> str:
        if not keys or not all(math.isfinite(y) for y in outputs):
            return ""
        with np.errstate(
            invalid="ignore", divide="ignore"
        ):  # an output that barely moves: no index, no driver
            return drivers(sub_design(self.design, keys), outputs)

    def drivers(self, label: str) -> str:
        """The parameters that move ``label``'s headroom most (:func:`storagelab.calibration.propagation.
        drivers` on the log answers of its draws), or "" where a draw has no answer."""
        answers = [d["answer"] for d in self.draws[label]]
        logs = [math.log(a) if a is not None and a > 0 else math.nan for a in answers]
        return self._driver(label, logs, self.keys.get(label, ()))

    def table(self) -> pl.DataFrame:
        """One row per candidate drawn: the median headroom and its 80 % interval (parameters, noise and
        discrepancy), P(meets the mix as given), P(meets the growth target), the draws that were censored
        at the cap (``at_cap``) or had no answer (``no_answer``), the top driver, and ``nominal`` (the
        headroom at the declared values) with ``p_below_nominal``, the probability that the headroom is
        less than that (:meth:`CandidateSample.p_below_nominal`: near 1, the nominal table reads high;
        null where the nominal answer is a bound)."""
        rows = []
        for label, s in self.samples.items():
            med, lo, hi = s.quantiles([0.5, LOW, HIGH])
            statuses = [d["status"] for d in self.draws[label]]
            top = self.drivers(label).split("; ")[0]
            rows.append({
                "architecture": label, "headroom": med, "low80": lo, "high80": hi,
                "p_meets_1x": s.p_above(1.0), "p_meets_growth": s.p_above(self.growth),
                "draws": len(statuses), "at_cap": sum(st.startswith("holds") for st in statuses),
                "no_answer": sum(d["answer"] is None for d in self.draws[label]),
                "top_driver": top, "nominal": s.nominal,
                "p_below_nominal": None if math.isnan(below := s.p_below_nominal()) else below,
            })  # fmt: skip
        schema = {"architecture": pl.String, "headroom": pl.Float64, "low80": pl.Float64, "high80": pl.Float64,
                  "p_meets_1x": pl.Float64, "p_meets_growth": pl.Float64, "draws": pl.Int64, "at_cap": pl.Int64,
                  "no_answer": pl.Int64, "top_driver": pl.String, "nominal": pl.Float64,
                  "p_below_nominal": pl.Float64}  # fmt: skip
        return pl.DataFrame(rows, schema=schema).sort("headroom", descending=True, maintain_order=True)

    def pairwise(self) -> pl.DataFrame:
        """P(headroom of the row's architecture > the column's), every ordered pair (the diagonal empty)."""
        labels = list(self.samples)
        cells: dict[tuple[str, str], float] = {}
        for a, b in combinations(labels, 2):
            p = p_greater(self.samples[a], self.samples[b])
            cells[(a, b)], cells[(b, a)] = p, 1 - p
        return pl.DataFrame(
            {"architecture": labels, **{b: [cells.get((a, b)) for a in labels] for b in labels}},
            schema={"architecture": pl.String, **dict.fromkeys(labels, pl.Float64)},
        )

    def closest_pair(self) -> tuple[str, str, float] | None:
        """The pair whose ranking is least sure: (better, worse, P(better > worse)) with P nearest 1/2."""
        labels = list(self.samples)
        best = None
        for a, b in combinations(labels, 2):
            p = p_greater(self.samples[a], self.samples[b])
            pair = (a, b, p) if p >= 0.5 else (b, a, 1 - p)
            if best is None or pair[2] < best[2]:
                best = pair
        return best

    def what_to_measure(self) -> pl.DataFrame:
        """What to measure next: per candidate, the parameters that move its headroom most; and for the
        closest pair, the parameters that decide the sign of their difference (its log ratio over the
        draws)."""
        rows = [{"for": label, "parameters": self.drivers(label)} for label in self.samples]
        pair = self.closest_pair()
        if pair is not None:
            a, b, p = pair
            da, db = self.draws[a], self.draws[b]
            diff = [
                math.log(x["answer"] / y["answer"]) if x["answer"] and y["answer"] else math.nan
                for x, y in zip(da, db, strict=True)
            ]
            keys = sorted({*self.keys.get(a, ()), *self.keys.get(b, ())})
            rows.append(
                {"for": f"ranking: {a} over {b} (P = {p:.2f})", "parameters": self._driver(a, diff, keys)}
            )
        return pl.DataFrame(rows, schema={"for": pl.String, "parameters": pl.String})

    def interval_chart(self, *, name: str = "headroom-uncertainty") -> alt.LayerChart:
        """Each candidate's median headroom and 80 % interval (parameters, noise and discrepancy) on a log
        axis, with the mix as given (1) and the growth target dashed."""
        import altair as alt

        from storagelab import charts

        t = self.table()
        data = charts.chart_data(t.select("architecture", "headroom", "low80", "high80", "p_meets_1x",
                                          "p_meets_growth", "top_driver")).to_pandas()  # fmt: skip
        order = t["architecture"].to_list()
        y = alt.Y("architecture:N", sort=order, title=None, axis=alt.Axis(labelLimit=360))
        x = alt.X("headroom:Q", title="load multiplier meeting every service level (80 % interval)",
                  scale=alt.Scale(type="log"))  # fmt: skip
        base = alt.Chart(data)
        bars = base.mark_rule(strokeWidth=3, color="#1f77b4", opacity=0.6).encode(
            y=y, x=alt.X("low80:Q"), x2="high80:Q"
        )
        tips = ["architecture", "headroom", "low80", "high80", "p_meets_1x", "p_meets_growth", "top_driver"]
        points = base.mark_point(filled=True, size=90, color="#1f77b4").encode(y=y, x=x, tooltip=tips)
        rules = alt.Chart(
            pl.DataFrame({"x": [1.0, self.growth], "what": ["as given", "growth target"]}).to_pandas()
        )
        marks = rules.mark_rule(strokeDash=[4, 4], color="#999999").encode(x="x:Q", tooltip=["what", "x"])
        subtitle = (
            "80 % intervals: parameter ranges, simulation noise and the calibration's discrepancy; "
            f"dashed: 1x and the growth target {self.growth:g}x"
        )
        return alt.layer(bars, points, marks).properties(
            title=charts.titled("Headroom with what the models do not know", subtitle),
            width=480,
            height=max(120, 26 * len(order)),
            name=name,
        )

    def probability_chart(self, *, name: str = "ranking-probabilities") -> alt.LayerChart:
        """The pairwise matrix as a heatmap: P(row's headroom > column's), with the value written in."""
        import altair as alt

        m = self.pairwise()
        long = m.unpivot(index="architecture", variable_name="versus", value_name="p").drop_nulls("p")
        data = long.with_columns(label=pl.col("p").round(2).cast(pl.String)).to_pandas()
        order = m["architecture"].to_list()
        base = alt.Chart(data).encode(
            y=alt.Y("architecture:N", sort=order, title="P(this architecture's headroom"),
            x=alt.X(
                "versus:N", sort=order, title="> this one's)", axis=alt.Axis(labelAngle=-30, labelLimit=200)
            ),
        )
        heat = base.mark_rect().encode(
            color=alt.Color("p:Q", scale=alt.Scale(domain=[0, 1], scheme="redblue"), title="probability"),
            tooltip=["architecture", "versus", alt.Tooltip("p:Q", format=".2f")],
        )
        text = base.mark_text(fontSize=11).encode(text="label:N")
        return alt.layer(heat, text).properties(
            title="Rankings as probabilities",
            width=max(200, 90 * len(order)),
            height=max(120, 30 * len(order)),
            name=name,
        )
