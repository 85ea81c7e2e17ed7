"""What a QoS scheduler promises, swept and checked: each function runs tenants on one station (a
device of ``capacity`` IOPS: 1 / capacity seconds per IO, exponential or deterministic) under
:class:`~storagelab.qos.MClock` and returns one row per setting with what was promised, what was
delivered and whether the promise held over every window.

- :func:`reservation_sweep`: two tenants reserve ``r`` each beside a weight-only tenant; the reservation
  holds while ``2 r`` fits the device, and breaks when it does not (a capacity estimated too high);
- :func:`limit_sweep`: a tenant limited to ``l`` beside an unlimited one, with ``at_limit="wait"`` (a hard
  limit) and ``"allow"`` (work-conserving: the limit is only a share when the device has room);
- :func:`weight_sweep`: two backlogged tenants with weights ``1 : k``;
- :func:`bypass_sweep`: a reserved tenant beside background IO that bypasses the scheduler;
- :func:`service_level_spare`: the service-level scheduler with spare capacity by deadline and by
  weight, against a latency target, a weight share and a minimum above its weight share.

Windows: a floor is checked as the fewest IOs in any window of ``window`` seconds (on a grid of a tenth
of it) against ``promise x window - 1``; a cap as the most IOs against ``promise x window + 1``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import altair as alt
import numpy as np
import polars as pl

from storagelab.kernel import ClosedSource, Deterministic, Exponential, FixedSampler, OpenSource, Station
from storagelab.kernel.simulation import simulate
from storagelab.qos.mclock import ClientQoS, MClock

_SAMPLER = FixedSampler(size=4096, span=10**9)
_SCHEMA = {
    "sweep": pl.String, "setting": pl.Float64, "tenant": pl.String, "promise": pl.String,
    "promised_iops": pl.Float64, "delivered_iops": pl.Float64, "worst_window_iops": pl.Float64, "held": pl.Boolean,
}  # fmt: skip


def _device(capacity: float, deterministic: bool):
    return Deterministic(1 / capacity) if deterministic else Exponential(1 / capacity)


def _run(
    clients: dict[str, ClientQoS],
    sources: Callable[[Station], list],
    *,
    capacity: float,
    seed: int,
    duration: float,
    at_limit: str = "wait",
    bypass: tuple[str, ...] = (),
    deterministic: bool = False,
) -> dict[str, np.ndarray]:
    disc = MClock(clients, at_limit=at_limit, record=True, bypass=bypass)
    disk = Station("device", _device(capacity, deterministic), servers=1, discipline=disc)
    simulate(disk, sources(disk), duration=duration, seed=seed, progress=False)
    times: dict[str, list[float]] = {}
    for t, cls, _cost, _phase in disc.log:
        times.setdefault(cls, []).append(t)
    return {c: np.asarray(v) for c, v in times.items()}


def window_counts(
    times: np.ndarray, window: float, start: float, end: float, *, align: str = "grid"
) -> np.ndarray:
    """How many of the sorted dispatch ``times`` fall in each window of ``window`` seconds in ``[start, end]``.

    - ``align="grid"``: windows ``[a, a + window)`` for ``a`` on a grid of a tenth of the window from
      ``start`` (the sweeps' windows);
    - ``align="floor"``: windows ``(t, t + window]`` from each dispatch ``t`` in ``[start, end - window]``.
      Their minimum is exact: the fewest dispatches in any window of that length starting between the
      first dispatch at or after ``start`` and ``end - window`` (as a window's start moves, its count
      falls only when the start passes a dispatch, so the fewest is just after one);
    - ``align="cap"``: windows ``[t, t + window)`` from each dispatch ``t`` in ``[start, end)``. Their
      maximum is exact: the most dispatches in any window starting in ``[start, end)`` (a count rises
      only when the start reaches a dispatch), counting what was dispatched by ``end``.
    """
    if align == "grid":
        starts, side = np.arange(start, end - window, window / 10), "left"
    elif align == "floor":
        starts, side = times[(times >= start) & (times <= end - window)], "right"
    elif align == "cap":
        starts, side = times[(times >= start) & (times < end)], "left"
    else:
        raise ValueError(f"window_counts: align must be 'grid', 'floor' or 'cap', got {align!r}")
    return np.searchsorted(times, starts + window, side=side) - np.searchsorted(times, starts, side=side)


def _backlogged(names: Sequence[str], workers: int = 16) -> Callable[[Station], list]:
    return lambda disk: [ClosedSource(n, disk, _SAMPLER, workers=workers, cls=n) for n in names]


def _row(sweep, setting, tenant, promise, promised, times, *, window, start, end, floor):
    counts = window_counts(times, window, start, end)
    worst = counts.min() if floor else counts.max()
    held = worst >= promised * window - 1 if floor else worst <= promised * window + 1
    delivered = ((times >= start) & (times < end)).sum() / (end - start)
    return {
        "sweep": sweep, "setting": float(setting), "tenant": tenant, "promise": promise,
        "promised_iops": float(promised), "delivered_iops": float(delivered),
        "worst_window_iops": float(worst / window), "held": bool(held),
    }  # fmt: skip


def reservation_sweep(
    reservations: Sequence[float],
    *,
    capacity: float = 1000.0,
    window: float = 0.1,
    seed: int = 1,
    duration: float = 3.0,
) -> pl.DataFrame:
    """Tenants ``a`` and ``b`` reserve ``r`` IOPS each beside ``c`` (weight 1, no reservation), all
    backlogged, for each ``r`` in ``reservations``, on a device with a fixed service time and on one with
    exponential service times (the same mean): a's reservation is a floor over every ``window``.
    ``promise`` says which device."""
    rows = []
    for deterministic in (True, False):
        for r in reservations:
            clients = {"a": ClientQoS(reservation=r), "b": ClientQoS(reservation=r), "c": ClientQoS()}
            times = _run(clients, _backlogged(clients), capacity=capacity, seed=seed, duration=duration,
                         deterministic=deterministic)  # fmt: skip
            device = "fixed service" if deterministic else "exponential service"
            rows.append(_row("reservation", r, "a", f"floor ({device})", r, times.get("a", np.array([])),
                             window=window, start=0.5, end=duration, floor=True))  # fmt: skip
    return pl.DataFrame(rows, schema=_SCHEMA)


def limit_sweep(
    limits: Sequence[float],
    *,
    capacity: float = 1000.0,
    window: float = 0.1,
    seed: int = 1,
    duration: float = 3.0,
) -> pl.DataFrame:
    """A tenant limited to ``l`` beside an unlimited one, with the hard limit (``wait``) and
    work-conserving (``allow``, with the other tenant idle half the time) for each ``l``: the limit is a
    cap over every ``window``. ``setting`` is ``l``; ``promise`` says which mode."""
    rows = []
    for mode in ("wait", "allow"):
        for lim in limits:
            clients = {"capped": ClientQoS(limit=lim), "other": ClientQoS()}

            def sources(disk):
                capped = ClosedSource("capped", disk, _SAMPLER, workers=16, cls="capped")
                other = OpenSource("other", disk, _SAMPLER, rate=0.5 * capacity, cls="other")  # room left
                return [capped, other]

            times = _run(clients, sources, capacity=capacity, seed=seed, duration=duration, at_limit=mode)
            rows.append(_row("limit", lim, "capped", f"cap ({mode})", lim, times.get("capped", np.array([])),
                             window=window, start=0.5, end=duration, floor=False))  # fmt: skip
    return pl.DataFrame(rows, schema=_SCHEMA)


def weight_sweep(
    ratios: Sequence[float],
    *,
    capacity: float = 1000.0,
    seed: int = 1,
    duration: float = 3.0,
    tolerance: float = 0.02,
) -> pl.DataFrame:
    """Two backlogged tenants with weights ``1`` and ``k`` for each ``k`` in ``ratios``: the heavier one's
    share of 1,000 IOs is ``k / (1 + k)`` within ``tolerance``. ``promised_iops`` and ``delivered_iops``
    are shares of the device's throughput over the run, times its capacity."""
    rows = []
    for k in ratios:
        clients = {"light": ClientQoS(weight=1.0), "heavy": ClientQoS(weight=float(k))}
        disc = MClock(clients, record=True)
        disk = Station("device", _device(capacity, False), servers=1, discipline=disc)
        simulate(disk, _backlogged(clients)(disk), duration=duration, seed=seed, progress=False)
        served = [c for _t, c, _cost, _ph in disc.log][200:1200]
        share, promised = served.count("heavy") / len(served), k / (1 + k)
        rows.append({
            "sweep": "weight", "setting": float(k), "tenant": "heavy", "promise": "share",
            "promised_iops": promised * capacity, "delivered_iops": share * capacity,
            "worst_window_iops": share * capacity, "held": abs(share - promised) <= tolerance,
        })  # fmt: skip
    return pl.DataFrame(rows, schema=_SCHEMA)


def bypass_sweep(
    background_iops: Sequence[float],
    *,
    reservation: float = 600.0,
    capacity: float = 1000.0,
    window: float = 0.1,
    seed: int = 1,
    duration: float = 3.0,
) -> pl.DataFrame:
    """A tenant reserving ``reservation`` beside a weight-only one, and background IO (e.g. a rebuild) at
    each rate of ``background_iops`` served ahead of the scheduler: the reservation holds until the
    background takes more than the device has left over it."""
    rows = []
    for bg in background_iops:
        clients = {"reserved": ClientQoS(reservation=reservation), "other": ClientQoS()}

        def sources(disk, bg=bg, clients=clients):
            srcs = _backlogged(clients)(disk)
            if bg > 0:
                srcs.append(OpenSource("background", disk, _SAMPLER, rate=float(bg), cls="background"))
            return srcs

        times = _run(clients, sources, capacity=capacity, seed=seed, duration=duration, bypass=("background",),
                     deterministic=True)  # fmt: skip
        rows.append(_row("bypass", bg, "reserved", "floor", reservation, times.get("reserved", np.array([])),
                         window=window, start=0.5, end=duration, floor=True))  # fmt: skip
    return pl.DataFrame(rows, schema=_SCHEMA)


def promise_chart(results: pl.DataFrame, *, title: str, name: str) -> alt.Chart:
    """One panel per sweep: against the setting swept (x: the reservation or limit in IOPS, the weight
    ratio, or the background IOPS), what was promised (grey) and what the worst window delivered (IOPS; for
    a share, the share of the run), coloured by whether the promise held."""
    from storagelab import charts

    delivered = results.with_columns(
        series=pl.when("held").then(pl.lit("delivered: held")).otherwise(pl.lit("delivered: broken")),
        iops=pl.col("worst_window_iops"),
    )
    promised = results.with_columns(series=pl.lit("promised"), iops=pl.col("promised_iops"))
    cols = ("sweep", "promise", "setting", "series", "iops")
    data = charts.chart_data(pl.concat([promised.select(cols), delivered.select(cols)]))
    domain = ["promised", "delivered: held", "delivered: broken"]
    return (
        alt.Chart(data.to_pandas(), title=title)
        .mark_point(filled=True, size=60)
        .encode(
            x=alt.X("setting:Q", title="setting swept (IOPS; weight ratio for weights)"),
            y=alt.Y("iops:Q", title="IOPS (worst window)"),
            color=alt.Color(
                "series:N",
                title=None,
                scale=alt.Scale(domain=domain, range=["#bbbbbb", "#2ca02c", "#d62728"]),
            ),
            shape=alt.Shape("promise:N", title=None),
            facet=alt.Facet("sweep:N", columns=2, title=None),
            tooltip=["sweep", "promise", "setting", "series", "iops"],
        )
        .resolve_scale(x="independent", y="independent")
        .properties(width=260, height=180, name=name)
    )


def dmclock_comparison(*, capacity: float = 1000.0, seed: int = 1, duration: float = 3.0) -> pl.DataFrame:
    """Three promises over several servers of ``capacity`` IOPS each, with dmClock and with independent
    mClock servers (no delta/rho): a reservation of 600 IOPS in total over two servers (beside a weight-4
    client), a limit of 300 in total over three (beside an unlimited client), and the fair share of a
    client that has only one of two servers (beside a client on both, equal weights: fair is one server
    each). Per setup and scheduler: what was promised and what the client got (IOPS)."""
    from storagelab.qos.dmclock import dmclock_servers

    setups = [
        ("reservation 600 in total, 2 servers", {"a": ClientQoS(reservation=600), "b": ClientQoS(weight=4)},
         {"a": [0, 1], "b": [0, 1]}, 2, 600.0),
        ("limit 300 in total, 3 servers", {"a": ClientQoS(limit=300), "b": ClientQoS()},
         {"a": [0, 1, 2], "b": [0, 1, 2]}, 3, 300.0),
        ("fair share with one of 2 servers", {"a": ClientQoS(), "b": ClientQoS()}, {"a": [0], "b": [0, 1]}, 2,
         capacity),
    ]  # fmt: skip
    rows = []
    for label, clients, uses, n, promised in setups:
        for distributed in (True, False):
            router, _ = dmclock_servers(
                clients, [_device(capacity, True) for _ in range(n)], distributed=distributed
            )
            srcs = [ClosedSource(f"{c}@{j}", router.via(j), _SAMPLER, workers=16, cls=f"{c}@{j}")
                    for c in clients for j in uses[c]]  # fmt: skip
            res = simulate(router, srcs, duration=duration, warmup=0.5, seed=seed, progress=False)
            got = float(res.summary().filter(pl.col("class").str.starts_with("a@"))["iops"].sum())
            rows.append({"setup": label, "scheduler": "dmClock" if distributed else "independent mClock",
                         "promised_iops": promised, "client_iops": got})  # fmt: skip
    return pl.DataFrame(rows)


def service_level_spare(*, capacity: float = 1000.0, seed: int = 1, duration: float = 6.0) -> pl.DataFrame:
    """The service-level scheduler (:class:`~storagelab.qos.ServiceLevels`) with spare capacity given
    out by deadline and by weight, on a device of ``capacity`` IOPS (exponential service), against three
    promises:

    - *latency target*: a volume offered 30 % of the capacity with a 10 ms target and a 40 % minimum
      (its weight) beside one offered 55 % with a 100 ms target: the tight volume's 99th-percentile
      wait (ms) against 10 ms;
    - *weight share*: three backlogged volumes whose minimums and targets never bind, weights 1 : 2 :
      3: the heaviest one's share of the device (%) against 50 %;
    - *minimum above its weight share*: equal weights, minimums 70 % and 10 % of the capacity, the first
      with enough IOs outstanding to be owed its minimum: its share (%) against 70 % (a scheduler that
      added the minimum and the weight share would give 85 %).

    One row per mode and promise: ``promised``, ``delivered`` (in the promise's unit) and whether it
    ``held`` (a wait at or under the target; a share within 2 points)."""
    from storagelab.qos.service_levels import ServiceLevel, ServiceLevels

    big = 1e15  # a bandwidth minimum that never binds (bytes/s)

    def dispatches(levels, sources, spare, deterministic):
        disc = ServiceLevels(levels, record=True, spare=spare)
        disk = Station("device", _device(capacity, deterministic), servers=1, discipline=disc)
        simulate(disk, sources(disk), duration=duration, seed=seed, progress=False)
        return disc.log

    def closed(specs):
        return lambda disk: [ClosedSource(n, disk, _SAMPLER, workers=w, cls=n) for n, w in specs]

    def share(log, name):
        served = [c for t, c, _w, _ph in log if t >= 0.5]
        return 100 * served.count(name) / len(served)

    rows = []
    for spare in ("deadline", "weight"):
        tight = {
            "tight": ServiceLevel(0.4 * capacity, big, 0.010),
            "loose": ServiceLevel(0.6 * capacity, big, 0.100),
        }

        def open_sources(disk):
            return [OpenSource("tight", disk, _SAMPLER, rate=0.30 * capacity, cls="tight"),
                    OpenSource("loose", disk, _SAMPLER, rate=0.55 * capacity, cls="loose")]  # fmt: skip

        log = dispatches(tight, open_sources, spare, False)
        p99 = 1e3 * float(np.quantile([w for _t, c, w, _ph in log if c == "tight"], 0.99))
        rows.append((spare, "latency target (p99 wait, ms)", 10.0, p99, p99 <= 10.0))
        weighted = {f"w{k}": ServiceLevel(1, big, 100.0, weight=k) for k in (1, 2, 3)}
        got = share(dispatches(weighted, closed([(n, 16) for n in weighted]), spare, False), "w3")
        rows.append((spare, "weight share 1 : 2 : 3 (heaviest, %)", 50.0, got, abs(got - 50.0) <= 2))
        owed = {"big": ServiceLevel(0.7 * capacity, big, 0.050, weight=1),
                "small": ServiceLevel(0.1 * capacity, big, 0.050, weight=1)}  # fmt: skip
        got = share(dispatches(owed, closed([("big", 64), ("small", 8)]), spare, True), "big")
        rows.append((spare, "minimum above its weight share (%)", 70.0, got, abs(got - 70.0) <= 2))
    return pl.DataFrame(rows, schema=["spare", "promise", "promised", "delivered", "held"], orient="row")
