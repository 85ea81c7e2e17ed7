"""Shared fixtures: the project layout, the loaded datasets, and the source documents when present."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from storagelab.kernel import ClosedSource, Deterministic, Exponential, FixedSampler, Station
from storagelab.kernel.disciplines import Discipline
from storagelab.kernel.simulation import SimulationResult, simulate
from storagelab.pipeline.layout import ProjectLayout
from storagelab.published import datasets
from storagelab.qos import ClientQoS, dmclock_servers

ROOT = Path(__file__).resolve().parents[1]
#: The source documents live outside the project (../shared/seeds); tests that need them skip without.
SEEDS = ROOT.parent / "shared" / "seeds"


@pytest.fixture(scope="session")
def layout() -> ProjectLayout:
    return ProjectLayout(ROOT)


@pytest.fixture(scope="session")
def published() -> pl.DataFrame:
    return datasets.load()


@pytest.fixture(scope="session")
def committed_index(tmp_path_factory) -> Path:
    """The report's index page built from the committed notebooks as they stand (the executed copies a
    report would link to; nbval checks they are what a run gives) and the committed benchmark runs, with
    nothing executed. The linked pages are not rendered."""
    import nbformat

    from storagelab.pipeline import report

    out = tmp_path_factory.mktemp("report")
    runs = report.plan(ProjectLayout(ROOT))
    for run in runs:
        run.title, run.summary, run.findings = report.describe(
            nbformat.read(run.notebook, as_version=4), run.parameters
        )
        run.files = {"html": f"{run.name}.html", "ipynb": f"{run.name}.ipynb"}
    report._write_index(runs, out / "index.html", report._copy_bench(report.bench_ratios(ROOT), out))
    return out / "index.html"


@pytest.fixture(scope="session")
def seeds() -> Path:
    if not (SEEDS / "README.md").is_file():
        pytest.skip("source documents (../shared/seeds) not present in this checkout")
    return SEEDS


# -- the QoS harness ----------------------------------------------------------------------------------
# One way to run a QoS scheduler for the QoS tests (tests/test_qos*.py, test_dmclock.py,
# test_service_levels.py): a single-server station with the discipline (or dmClock servers behind their
# router), tenants driven by backlogged closed sources or by a load the test builds, and the dispatch
# log of every server merged. Source names, classes and the station's name are what the tests used
# before, so a seed gives the same run.

QOS_SERVICE_S = 1e-3  # one server at 1 ms per IO: 1,000 IOPS
QOS_SAMPLER = FixedSampler(size=4096, span=10**9)


@dataclass
class QosRun:
    """What a run dispatched: ``log`` entries ``(time, tenant, x, phase)``, all servers merged in time
    order, where ``x`` is the cost (mClock, token bucket) or the wait in s (service levels) and ``phase``
    is ``""`` where the discipline records none; a dmClock tenant is its client (``"a@1"`` is ``"a"``)."""

    log: list[tuple[float, str, float, str]]
    result: SimulationResult
    disciplines: list[Discipline]

    @property
    def discipline(self) -> Discipline:
        return self.disciplines[0]

    def times(self, tenant: str) -> np.ndarray:
        """The tenant's dispatch times (s), sorted."""
        return np.array([t for t, c, _x, _ph in self.log if c == tenant])

    def order(self, start: float = 0.0) -> list[str]:
        """The tenants in dispatch order, from ``start`` (s) on."""
        return [c for t, c, _x, _ph in self.log if t >= start]

    def waits(self, tenant: str, start: float = 0.0) -> np.ndarray:
        """A service-level volume's waits (s) of the IOs dispatched from ``start`` on."""
        return np.array([w for t, c, w, _ph in self.log if c == tenant and t >= start])

    def iops(self, tenant: str) -> float:
        """IOPS completed after the warm-up by the tenant's sources (all of a dmClock client's)."""
        s = self.result.summary()
        return float(s.filter(pl.col("class").str.split("@").list.first() == tenant)["iops"].sum())


def _qos_tenants(discipline: Discipline) -> list[str]:
    for attr in ("settings", "levels", "buckets"):  # MClock, ServiceLevels, TokenBucket
        if hasattr(discipline, attr):
            return list(getattr(discipline, attr))
    raise TypeError(f"QoS harness: no tenants known for {type(discipline).__name__}; pass load=")


def _qos_log(disciplines: Sequence[Discipline], tenant: Callable[[str], str]) -> list:
    entries = [(e[0], tenant(e[1]), e[2], e[3] if len(e) > 3 else "") for d in disciplines for e in d.log]
    return sorted(entries) if len(disciplines) > 1 else entries


class QosHarness:
    service_s = QOS_SERVICE_S
    sampler = QOS_SAMPLER

    def station(
        self,
        discipline: Discipline,
        load: Mapping[str, int] | Callable[[Station], list] | None = None,
        *,
        service: object = None,
        duration: float = 3.0,
        seed: int = 1,
        warmup: float = 0.0,
        backlog: int = 16,
    ) -> QosRun:
        """``discipline`` (its dispatch log switched on) on one server ``"disk"`` of ``service``
        (default: exponential, 1 ms mean). ``load``: a callable building the sources from the station,
        or tenant -> closed workers; default: every tenant the discipline names, ``backlog`` workers
        each (backlogged)."""
        discipline.record = True
        disk = Station("disk", service or Exponential(QOS_SERVICE_S), servers=1, discipline=discipline)
        if callable(load):
            sources = load(disk)
        else:
            workers = dict(load) if load is not None else dict.fromkeys(_qos_tenants(discipline), backlog)
            sources = [ClosedSource(n, disk, QOS_SAMPLER, workers=w, cls=n) for n, w in workers.items()]
        res = simulate(disk, sources, duration=duration, warmup=warmup, seed=seed, progress=False)
        return QosRun(_qos_log([discipline], lambda c: c), res, [discipline])

    def dmclock(
        self,
        clients: Mapping[str, ClientQoS],
        uses: Mapping[str, Sequence[int]],
        *,
        servers: int = 2,
        distributed: bool = True,
        exponential: bool = False,
        duration: float = 3.0,
        seed: int = 1,
        warmup: float = 0.5,
        workers: int = 16,
    ) -> QosRun:
        """dmClock over ``servers`` servers of 1 ms per IO (exponential or fixed); each client has a closed
        source of ``workers`` per server it uses (``uses``: client -> server indices), as a Ceph client
        keeps a queue per OSD. ``distributed=False``: independent mClock servers."""
        services = [
            Exponential(QOS_SERVICE_S) if exponential else Deterministic(QOS_SERVICE_S)
            for _ in range(servers)
        ]
        router, stations = dmclock_servers(clients, services, distributed=distributed, record=True)
        sources = [ClosedSource(f"{c}@{j}", router.via(j), QOS_SAMPLER, workers=workers, cls=f"{c}@{j}")
                   for c in clients for j in uses[c]]  # fmt: skip
        res = simulate(router, sources, duration=duration, warmup=warmup, seed=seed, progress=False)
        disciplines = [st.discipline for st in stations]
        return QosRun(_qos_log(disciplines, client_of_class), res, disciplines)


def client_of_class(cls: str) -> str:
    return cls.split("@", 1)[0]


@pytest.fixture(scope="session")
def qos() -> QosHarness:
    """The QoS harness (session-scoped: it keeps no state, and Hypothesis tests may use it)."""
    return QosHarness()
