"""Speed of the simulation kernel, measured side by side with Ciw and a straightforward SimPy model.

Scenarios (each model simulates the same system for the same simulated time, in one process, in rounds
that run every model once, so the machine's state is as alike as it can be; each row is the median of
its rounds, as this is wall-clock time):

- ``mm4``: M/M/4 at utilisation 0.9 (mean service 1 ms). Models: storagelab (with its exact open-loop
  shortcuts, and without them), Ciw, and SimPy with one process per customer and ``simpy.Resource``
  (the textbook way). Each prints its mean response time beside Erlang C's.
- ``closed``: 64 QD1 workers, 4 KB 70/30 random, over a 4-node cluster that keeps every block on two
  nodes (writes to both, complete when both have; reads from one); storagelab only. Fork/join breaks
  product form, so exact MVA does not apply and there is no analytic column.
- ``vSAN``: a calibration scenario as the calibration runs it (Virtual SAN all-flash, 64 VMs: the
  study's preset and Iometer workload, with a software-path delay, host queues, RAID-0 capacity SSDs,
  NVMe write buffers and mirrored writes), and a textbook SimPy model of the same closed mirrored
  cluster with the preset's parameter values; their mean response times should agree within noise. A
  third model of that cluster uses no framework at all (a heap of calls): the floor for any kernel
  written in Python, so the gap to it is what composition (and the preset's further detail) costs.

``ratio_to_ciw`` compares each M/M/4 row with Ciw's rate; ``ratio_to_simpy`` compares each row with the
SimPy model of its scenario (null where there is none).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from heapq import heappop, heappush, heapreplace
from typing import Any, NamedTuple

import numpy as np
import polars as pl
import simpy
from tqdm.auto import tqdm

from storagelab import theory
from storagelab.components.cluster import ReplicatedCluster
from storagelab.kernel.service import Exponential
from storagelab.kernel.simulation import SimulationResult, simulate
from storagelab.kernel.sources import ClosedSource, FixedSampler, OpenSource
from storagelab.kernel.station import Station

MEAN_SERVICE = 1e-3  # s
SERVERS = 4
UTILISATION = 0.9


@dataclass
class BenchRow:
    model: str
    scenario: str
    simulated_ios: int
    wall_seconds: float
    mean_response_ms: float
    analytic_mean_ms: float | None

    @property
    def ios_per_second(self) -> float:
        return self.simulated_ios / self.wall_seconds


def _mm4_rates() -> tuple[float, float]:
    mu = 1.0 / MEAN_SERVICE
    return UTILISATION * SERVERS * mu, mu


def run_storagelab_mm4(horizon: float, warmup: float, seed: int, shortcuts: bool = True) -> BenchRow:
    lam, mu = _mm4_rates()
    station = Station("mm4", Exponential(1 / mu), servers=SERVERS)
    src = OpenSource("arrivals", station, FixedSampler(), rate=lam, shortcuts=shortcuts)
    t = time.perf_counter()
    res = simulate(station, [src], duration=horizon, warmup=warmup, seed=seed, progress=False)
    wall = time.perf_counter() - t
    row = res.summary().row(0, named=True)
    analytic = 1e3 * theory.mmc_mean_response(lam, mu, SERVERS)
    model = "storagelab" if shortcuts else "storagelab (no shortcuts: an event per arrival and completion)"
    return BenchRow(model, "M/M/4 rho=0.9", src.issued_total, wall, row["mean_ms"], analytic)


def run_storagelab_mm4_events(horizon: float, warmup: float, seed: int) -> BenchRow:
    return run_storagelab_mm4(horizon, warmup, seed, shortcuts=False)


def run_ciw_mm4(horizon: float, warmup: float, seed: int) -> BenchRow:
    import ciw

    lam, mu = _mm4_rates()
    network = ciw.create_network(
        arrival_distributions=[ciw.dists.Exponential(lam)],
        service_distributions=[ciw.dists.Exponential(mu)],
        number_of_servers=[SERVERS],
    )
    ciw.seed(seed)
    t = time.perf_counter()
    sim = ciw.Simulation(network)
    sim.simulate_until_max_time(horizon)
    wall = time.perf_counter() - t
    recs = sim.get_all_records()
    resp = [r.exit_date - r.arrival_date for r in recs if r.arrival_date >= warmup]
    return BenchRow(
        "ciw",
        "M/M/4 rho=0.9",
        len(recs),
        wall,
        1e3 * statistics.fmean(resp),
        1e3 * theory.mmc_mean_response(lam, mu, SERVERS),
    )


def run_simpy_mm4(horizon: float, warmup: float, seed: int) -> BenchRow:
    """The textbook SimPy model: a process per customer, a ``simpy.Resource`` for the servers."""
    lam, mu = _mm4_rates()
    env = simpy.Environment()
    servers = simpy.Resource(env, capacity=SERVERS)
    rng = np.random.default_rng(seed)
    responses: list[float] = []
    done = [0]

    def customer(env: simpy.Environment):
        arrived = env.now
        with servers.request() as req:
            yield req
            yield env.timeout(rng.exponential(1 / mu))
        done[0] += 1
        if arrived >= warmup:
            responses.append(env.now - arrived)

    def arrivals(env: simpy.Environment):
        while True:
            yield env.timeout(rng.exponential(1 / lam))
            env.process(customer(env))

    env.process(arrivals(env))
    t = time.perf_counter()
    env.run(until=horizon)
    wall = time.perf_counter() - t
    return BenchRow(
        "simpy (process per IO)",
        "M/M/4 rho=0.9",
        done[0],
        wall,
        1e3 * statistics.fmean(responses),
        1e3 * theory.mmc_mean_response(lam, mu, SERVERS),
    )


def closed_cluster_model() -> tuple[ReplicatedCluster, ClosedSource]:
    """64 QD1 workers, 4 KB 70/30 random, 4 nodes, every block on two nodes."""
    nodes = [Station(f"node{i}", Exponential(0.4e-3), servers=4) for i in range(4)]
    cluster = ReplicatedCluster("cluster", nodes, replicas=2)
    src = ClosedSource("iometer", cluster, FixedSampler(size=4096, read_pct=70, span=64 * 2**30), workers=64)
    return cluster, src


def run_storagelab_closed(horizon: float, warmup: float, seed: int) -> BenchRow:
    cluster, src = closed_cluster_model()
    t = time.perf_counter()
    res = simulate(cluster, [src], duration=horizon, warmup=warmup, seed=seed, progress=False)
    wall = time.perf_counter() - t
    row = res.summary().row(0, named=True)
    return BenchRow(
        "storagelab", "closed 64xQD1, 4 nodes, 2 copies", src.issued_total, wall, row["mean_ms"], None
    )


#: The calibration scenario the realistic bench rows run: Virtual SAN all-flash at 64 VMs.
VSAN_CONFIGURATION, VSAN_VMS = "all-flash NVMe", 64
VSAN_SCENARIO = f"vSAN {VSAN_CONFIGURATION}, {VSAN_VMS} VMs (calibration scenario)"


def vsan_scenario_run() -> Callable[[float, float, int], tuple[SimulationResult, int]]:
    """The Virtual SAN calibration scenario, built: a function of ``(horizon, warmup, seed)`` that runs
    it (the study's preset under its Iometer workload: closed loop, QD1 per VM, 4 KiB 70 % random reads,
    writes on two hosts) and returns the result and the IOs issued (warm-up included). Building the
    preset is left out of what the function does, so a timer or profiler around it sees the run only.
    Call it once: its components belong to that run (build another for the next)."""
    from storagelab.studies.vsan.preset import vsan
    from storagelab.studies.vsan.workloads import vsan_iometer

    topology = vsan(VSAN_CONFIGURATION)
    sources = vsan_iometer(vms=VSAN_VMS).sources(topology.volumes)

    def run(horizon: float, warmup: float, seed: int) -> tuple[SimulationResult, int]:
        res = simulate(sources[0].target, sources, duration=horizon, warmup=warmup, seed=seed, progress=False)
        return res, sum(s.issued_total for s in sources)

    return run


def run_storagelab_vsan(horizon: float, warmup: float, seed: int) -> BenchRow:
    """The Virtual SAN calibration scenario as the calibration runs it (:func:`vsan_scenario_run`)."""
    run = vsan_scenario_run()
    t = time.perf_counter()
    res, issued = run(horizon, warmup, seed)
    wall = time.perf_counter() - t
    return BenchRow("storagelab", VSAN_SCENARIO, issued, wall, res.summary()["mean_ms"][0], None)


class _TextbookCluster(NamedTuple):
    """The Virtual SAN preset's values the two textbook models of its scenario are built from."""

    hosts: int
    copies: int
    per_host: int  # capacity SSDs per host
    unit: int  # placement unit (bytes): which host holds a block, and which of its SSDs
    stack_mean: float  # the software path's mean delay (s), on each copy's path
    stack_scv: float  # and its squared coefficient of variation
    cores: int  # per host
    node_mean: float  # mean CPU time per copy (s)
    link_s: float  # one 4 KiB crossing of a host's port (s)
    ssd: Any  # a capacity SSD's model (fresh)
    nvme: Any  # a cache device's model (fresh): the read cache and write buffer
    blocks: int  # 4 KiB blocks the VMs address


def _textbook_cluster() -> _TextbookCluster:
    """The preset's parameter values and device models for :func:`run_simpy_vsan` and
    :func:`run_floor_vsan`."""
    from storagelab.studies.vsan.preset import vsan
    from storagelab.studies.vsan.workloads import SPAN_PER_VM

    p = vsan(VSAN_CONFIGURATION).params
    if (p["copy_path_share"].value, p["read_cache_resident"].value) != (1.0, 1.0):
        raise ValueError(
            "the textbook models take the whole software delay on each copy's path and every "
            "read from the warm cache device; the preset now declares otherwise"
        )
    return _TextbookCluster(
        int(p["hosts"].value), int(p["copies"].value), int(p["capacity_devices_per_host"].value),
        int(p["placement"].si), p["stack_delay"].si, p["stack_delay_scv"].value,
        int(p["host_sockets"].value * p["cores_per_socket"].value), p["cpu_cycles_per_io"].value / p["core_clock"].si,
        4096 / p["host_link_rate"].si, p.device("capacity_device"), p.device("cache_device"),
        VSAN_VMS * SPAN_PER_VM // 4096,
    )  # fmt: skip


def run_simpy_vsan(horizon: float, warmup: float, seed: int) -> BenchRow:
    """The same closed mirrored cluster written the textbook SimPy way, with the preset's parameter values
    and device models: a process per VM; per copy a process that takes the software path and network
    (a timeout), crosses its host's 10 GbE port (a ``simpy.Resource`` per direction: a write's payload in, a
    read's data out), queues for the host's CPU cores (a ``simpy.Resource`` of that many) and for its
    NVMe cache device (a warm read cache and the write buffer: every read hits it, on one of the drive's
    units; a write is acknowledged from the drive's DRAM and programmed on a unit in the background, as
    :func:`~storagelab.components.flash.flash_drive` does); a write waits for both copies with ``all_of``. Each copy written to a buffer starts a destage process that
    writes it to one of the host's capacity SSDs (the preset's write log at its level destages one IO
    per write, at sweep addresses spread over the SSDs; its queue limits are never reached here)."""
    hosts, copies, per_host, unit, stack_mean, stack_scv, cores, node_mean, link_s, ssd, nvme, blocks = (
        _textbook_cluster()
    )
    env = simpy.Environment()
    rng = np.random.default_rng(seed)
    cpu = [simpy.Resource(env, cores) for _ in range(hosts)]
    nic = [[simpy.Resource(env, 1), simpy.Resource(env, 1)] for _ in range(hosts)]  # in, out
    reads = [[simpy.Resource(env, ssd.parallelism) for _ in range(per_host)] for _ in range(hosts)]
    writes = [simpy.Resource(env, nvme.parallelism) for _ in range(hosts)]
    sigma2 = np.log1p(stack_scv)
    responses: list[float] = []
    done = [0]

    def destage(h: int):
        with reads[h][int(rng.integers(per_host))].request() as req:
            yield req
            yield env.timeout(ssd.service_time(False, 4096, 0, rng))

    def program(h: int):
        with writes[h].request() as req:
            yield req
            yield env.timeout(nvme.service_time(False, 4096, 0, rng))

    def copy(h: int, is_read: bool, address: int):
        yield env.timeout(rng.lognormal(np.log(stack_mean) - sigma2 / 2, np.sqrt(sigma2)))  # this copy's path
        if not is_read:  # the write's payload enters the host's port
            with nic[h][0].request() as req:
                yield req
                yield env.timeout(link_s)
        with cpu[h].request() as req:
            yield req
            yield env.timeout(rng.exponential(node_mean))
        if is_read:  # a read hit on one of the cache device's units
            with writes[h].request() as req:
                yield req
                yield env.timeout(nvme.service_time(True, 4096, 0, rng))
        else:  # acknowledged from the drive's power-protected DRAM, programmed on a unit in the background
            yield env.timeout(nvme.host_write_latency)
            env.process(program(h))
            env.process(destage(h))
        if is_read:  # the read's data leave through the host's port
            with nic[h][1].request() as req:
                yield req
                yield env.timeout(link_s)

    def vm():
        while True:
            start = env.now
            is_read = rng.random() < 0.7
            address = int(rng.integers(blocks)) * 4096
            primary = (address // unit) % hosts
            if is_read:
                yield env.process(copy(primary, True, address))
            else:
                yield env.all_of(
                    [env.process(copy((primary + k) % hosts, False, address)) for k in range(copies)]
                )
            done[0] += 1
            if start >= warmup:
                responses.append(env.now - start)

    for _ in range(VSAN_VMS):
        env.process(vm())
    t = time.perf_counter()
    env.run(until=horizon)
    wall = time.perf_counter() - t
    return BenchRow("simpy (process per VM and per copy)", VSAN_SCENARIO, done[0], wall,
                    1e3 * statistics.fmean(responses), None)  # fmt: skip


def _blocks(draw: Callable[[int], np.ndarray], n: int = 4096) -> Callable[[], float]:
    """One variate per call from ``draw(n)``, drawn ``n`` at a time (as the kernel's service sources do)."""
    block: list[float] = []

    def one() -> float:
        if not block:
            block.extend(draw(n).tolist())
        return block.pop()

    return one


def run_floor_vsan(horizon: float, warmup: float, seed: int) -> BenchRow:
    """The textbook SimPy model's cluster (:func:`run_simpy_vsan`: the same stations, routing and parameter
    values) written with no framework at all: a heap of ``(time, order, function, argument)``, each event a
    call of one small function that knows what comes next; every station FIFO, its servers' free times in
    a heap, so an IO's completion there is computed when it arrives; variates drawn in numpy blocks. It is
    what Python alone can do on this system, a floor for any kernel written in it: the gap between this row
    and storagelab's is what the kernel's composition costs (an event object, a path and a call per stage,
    components that any path can hold, each keeping its statistics) and the preset's further detail (the
    write log's destage order, the write buffers), not what the interpreter does. Its mean response should
    agree with the SimPy model's within noise (a test checks it)."""
    hosts, copies, per_host, unit, stack_mean, stack_scv, cores, node_mean, link_s, ssd, nvme, blocks = (
        _textbook_cluster()
    )
    rng = np.random.default_rng(seed)
    sigma2 = float(np.log1p(stack_scv))
    stack = _blocks(lambda n: rng.lognormal(np.log(stack_mean) - sigma2 / 2, np.sqrt(sigma2), n))
    cpu_time = _blocks(lambda n: rng.exponential(node_mean, n))
    uniform = _blocks(lambda n: rng.random(n))
    cpu = [[0.0] * cores for _ in range(hosts)]  # per station: when each server is next free (a heap)
    port = [[0.0, 0.0] for _ in range(hosts)]  # per host port: when each direction (in, out) is next free
    reads = [[[0.0] * ssd.parallelism for _ in range(per_host)] for _ in range(hosts)]
    writes = [[0.0] * nvme.parallelism for _ in range(hosts)]
    queue: list[tuple[float, int, Callable[[Any], None], Any]] = []
    clock = [0.0, 0]  # now (s), events scheduled
    done = [0, 0, 0.0]  # IOs completed, of them after the warm-up, their summed response (s)

    def at(t: float, fn: Callable[[Any], None], arg: Any) -> None:
        clock[1] += 1
        heappush(queue, (t, clock[1], fn, arg))

    def fifo(free: list[float], s: float) -> float:
        start = free[0] if free[0] > clock[0] else clock[0]
        heapreplace(free, start + s)
        return start + s

    def issue(io: list) -> None:  # io: [start, is_read, address, copies left]
        now = clock[0]
        io[0], io[1], io[2] = now, uniform() < 0.7, int(uniform() * blocks) * 4096
        primary = (io[2] // unit) % hosts
        if io[1]:  # each copy's path takes the software delay
            at(now + stack(), read_cpu, (io, primary))
            return
        io[3] = copies
        for k in range(copies):
            at(now + stack(), write_port, (io, (primary + k) % hosts))

    def write_port(a: tuple) -> None:  # the write's payload enters the copy's host port
        into = port[a[1]]
        start = into[0] if into[0] > clock[0] else clock[0]
        into[0] = start + link_s
        at(start + link_s, write_cpu, a)

    def read_cpu(a: tuple) -> None:
        at(fifo(cpu[a[1]], cpu_time()), read_device, a)

    def read_device(a: tuple) -> None:  # a read hit on the host's cache device
        at(fifo(writes[a[1]], nvme.service_time(True, 4096, 0, rng)), read_out, a)

    def read_out(a: tuple) -> None:  # the read's data leave through the host's port
        out = port[a[1]]
        start = out[1] if out[1] > clock[0] else clock[0]
        out[1] = start + link_s
        at(start + link_s, completed, a[0])

    def write_cpu(a: tuple) -> None:
        at(fifo(cpu[a[1]], cpu_time()), write_device, a)

    def write_device(a: tuple) -> None:  # acknowledged from the drive's DRAM, programmed in the background
        fifo(writes[a[1]], nvme.service_time(False, 4096, 0, rng))
        at(clock[0] + nvme.host_write_latency, written, a)

    def written(a: tuple) -> None:
        io, h = a  # the copy is destaged to one of its host's capacity SSDs (nothing waits for it)
        fifo(reads[h][int(uniform() * per_host)], ssd.service_time(False, 4096, 0, rng))
        io[3] -= 1
        if io[3] == 0:
            completed(io)

    def completed(io: list) -> None:
        done[0] += 1
        if io[0] >= warmup:
            done[1] += 1
            done[2] += clock[0] - io[0]
        issue(io)

    for _ in range(VSAN_VMS):
        issue([0.0, True, 0, 0])
    t = time.perf_counter()
    while queue[0][0] <= horizon:
        clock[0], _, fn, arg = heappop(queue)
        fn(arg)
    wall = time.perf_counter() - t
    return BenchRow("heapq and callbacks, no framework (the SimPy model's system)", VSAN_SCENARIO, done[0],
                    wall, 1e3 * done[2] / done[1], None)  # fmt: skip


def _pure_python_row(function: str, horizon: float, warmup: float, seed: int) -> BenchRow:
    """A storagelab row (``function`` of this module) run in a fresh process with the per-IO modules as pure
    Python (:data:`storagelab.kernel.native.PURE_PYTHON_VARIABLE`), timed there as in this process."""
    import json
    import os
    import subprocess
    import sys

    from storagelab.kernel import native

    code = (
        "import json, sys\nfrom storagelab.verify import benchmark as b\n"
        "r = getattr(b, sys.argv[1])(*map(float, sys.argv[2:4]), int(sys.argv[4]))\n"
        "print(json.dumps([r.model, r.scenario, r.simulated_ios, r.wall_seconds, r.mean_response_ms,\n"
        "                  r.analytic_mean_ms]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, function, str(horizon), str(warmup), str(seed)],
        env={**os.environ, native.PURE_PYTHON_VARIABLE: "1"}, capture_output=True, text=True, check=True,
    )  # fmt: skip
    model, scenario, ios, wall, mean, analytic = json.loads(done.stdout.strip().splitlines()[-1])
    return BenchRow(
        f"{model}, pure Python (per-IO modules not compiled)", scenario, ios, wall, mean, analytic
    )


def bench(quick: bool = False, seed: int = 1, repeats: int | None = None) -> pl.DataFrame:
    """Run every model on every scenario ``repeats`` times; one row per model and scenario (medians)."""
    repeats = repeats or (1 if quick else 3)
    mm4_horizon = 15.0 if quick else 60.0  # simulated seconds: 54k / 216k customers at 3,600/s
    closed_horizon = 1.0 if quick else 4.0
    vsan_horizon = 1.0 if quick else 3.0  # simulated seconds: about 40k / 120k IOs
    runs = [
        (run_storagelab_mm4, mm4_horizon, 1.0),
        (run_storagelab_mm4_events, mm4_horizon, 1.0),
        (run_ciw_mm4, mm4_horizon, 1.0),
        (run_simpy_mm4, mm4_horizon, 1.0),
        (run_storagelab_closed, closed_horizon, 0.1),
        (run_storagelab_vsan, vsan_horizon, 0.2),
        (run_simpy_vsan, vsan_horizon, 0.2),
        (run_floor_vsan, vsan_horizon, 0.2),
    ]
    from storagelab.kernel import native

    if native.status().startswith("compiled"):  # the same rows with the modules not compiled, beside them
        at = {fn: i for i, (fn, _, _) in enumerate(runs)}
        for fn in (run_storagelab_vsan, run_storagelab_mm4):
            runs.insert(at[fn] + 1, (partial(_pure_python_row, fn.__name__), *runs[at[fn]][1:]))
    # in rounds: each round runs every model once (repeat r on seed + r), so a change in this machine's speed
    # while the benchmark runs (it drifts by tens of per cent within minutes) touches every row alike
    results: list[list[BenchRow]] = [[] for _ in runs]
    with tqdm(total=repeats * len(runs), desc="benchmark", unit="run") as bar:
        for r in range(repeats):
            for k, (fn, horizon, warmup) in enumerate(runs):
                results[k].append(fn(horizon, warmup, seed + r))
                bar.update()
    rows = []
    for model_results in results:
        wall = statistics.median(r.wall_seconds for r in model_results)
        first = model_results[0]
        rows.append(
            {
                "model": first.model,
                "scenario": first.scenario,
                "simulated_ios": first.simulated_ios,
                "wall_seconds": wall,
                "ios_per_second": first.simulated_ios / wall,
                "mean_response_ms": statistics.fmean(r.mean_response_ms for r in model_results),
                "analytic_mean_ms": first.analytic_mean_ms,
                "repeats": repeats,
            }
        )
    df = pl.DataFrame(rows)
    ciw_rate = df.filter(pl.col("model") == "ciw")["ios_per_second"][0]
    simpy_rate = (
        pl.col("ios_per_second").filter(pl.col("model").str.starts_with("simpy")).first().over("scenario")
    )
    return df.with_columns(
        ratio_to_ciw=pl.when(pl.col("scenario").str.starts_with("M/M/4")).then(
            pl.col("ios_per_second") / ciw_rate
        ),
        ratio_to_simpy=pl.col("ios_per_second") / simpy_rate,
    )


def sweep_efficiency(
    points: int = 16, duration_s: float = 100.0, repeats: int = 2, seed: int = 1
) -> pl.DataFrame:
    """The same ``points``-run M/M/4 sweep (one point, ``points`` seeds: runs of equal cost, ``duration_s``
    simulated seconds each) on an embedded Dask
    cluster of 1 and of 2 worker processes, alternately ``repeats`` times, each into a fresh store; each
    cluster is started (and its workers import the package) before the clock does. One row per worker count: median wall seconds, and the
    speed-up of 2 workers over 1 (parallel efficiency = speed-up / 2)."""
    import tempfile

    from distributed import Client

    from storagelab.dask_cluster import local_cluster
    from storagelab.pipeline.sweeps import sweep

    spec = {"name": "bench", "scenario": "storagelab.pipeline.scenarios:mmc_queue",
            "fixed": {"servers": 4, "rho": 0.8, "duration_s": duration_s},
            "seeds": list(range(seed, seed + points))}  # fmt: skip
    walls: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(repeats):
        for n in walls:  # one cluster at a time, so idle workers do not share the cores
            with local_cluster(n) as cluster, Client(cluster) as client:
                client.run(lambda: __import__("storagelab.pipeline.scenarios"))  # warm up every worker
                with tempfile.TemporaryDirectory() as tmp:
                    done = sweep(spec, results=tmp, client=client, progress=False)
            if done.failed or done.computed != points:
                raise RuntimeError(f"benchmark sweep failed: {done.failed}")
            walls[n].append(done.wall_s)
    one = statistics.median(walls[1])
    return pl.DataFrame(
        [{"workers": n, "runs": points, "median_wall_seconds": statistics.median(w), "walls": ", ".join(f"{x:.2f}" for x in w),
          "speedup_over_1": one / statistics.median(w)} for n, w in walls.items()]
    )  # fmt: skip


#: The storagelab rows of :func:`bench` that :func:`against_revision` times in both checkouts: the row's
#: function in :mod:`storagelab.verify.benchmark`, its simulated seconds and warm-up (as ``bench`` runs them).
STORAGELAB_ROWS: dict[str, tuple[str, float, float]] = {
    "M/M/4 rho=0.9": ("run_storagelab_mm4", 60.0, 1.0),
    "M/M/4 rho=0.9, no shortcuts": ("run_storagelab_mm4_events", 60.0, 1.0),
    "closed 64xQD1, 4 nodes, 2 copies": ("run_storagelab_closed", 4.0, 0.1),
    VSAN_SCENARIO: ("run_storagelab_vsan", 3.0, 0.2),
}

_TIME_ROWS = """
import json, sys
try:
    from storagelab.verify import benchmark as b
except ImportError:  # a revision from before the benchmark's home was storagelab.verify
    from storagelab import benchmark as b
rows = json.loads(sys.argv[1])
out = {}
for name, (fn, horizon, warmup) in rows.items():
    r = getattr(b, fn)(horizon, warmup, int(sys.argv[2]))
    out[name] = [r.wall_seconds, r.simulated_ios, r.mean_response_ms]
print(json.dumps(out))
"""


def run_limit_cost(rounds: int = 7, seed: int = 1, horizon: float = 2.0, warmup: float = 0.5) -> pl.DataFrame:
    """What the runaway guard costs (:mod:`storagelab.kernel.run_limits`): the Virtual SAN calibration
    scenario (:func:`vsan_scenario_run`) and the M/M/4 queue, each run ``rounds`` times without limits (the
    loop without a countdown) and with limits that never bind (``max_events`` 10**15, ``max_wall_s`` a day:
    the loop that counts down to a check every 4,096 events), alternately in this process, in whatever
    build is in use (compiled or pure Python: the ``build`` column). One row per scenario: the median wall
    seconds of each and their ratio (limited / unlimited: above 1 is the guard's cost), and whether both
    simulated the same IOs (they must: the guard changes when the loop looks at the clock, not what it
    does)."""
    from storagelab.kernel import native

    if not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be an integer >= 1, got {rounds!r}")
    limits = {"max_events": 10**15, "max_wall_s": 86_400.0}

    def vsan(limited: bool) -> tuple[float, int]:
        from storagelab.studies.vsan.preset import vsan as build
        from storagelab.studies.vsan.workloads import vsan_iometer

        sources = vsan_iometer(vms=VSAN_VMS).sources(build(VSAN_CONFIGURATION).volumes)
        t = time.perf_counter()
        simulate(sources[0].target, sources, duration=horizon, warmup=warmup, seed=seed, progress=False,
                 **(limits if limited else {}))  # fmt: skip
        return time.perf_counter() - t, sum(s.issued_total for s in sources)

    def mm4(limited: bool) -> tuple[float, int]:
        lam, mu = _mm4_rates()
        station = Station("mm4", Exponential(1 / mu), servers=SERVERS)
        src = OpenSource("arrivals", station, FixedSampler(), rate=lam)
        t = time.perf_counter()
        simulate(station, [src], duration=200 * horizon, warmup=warmup, seed=seed, progress=False,
                 **(limits if limited else {}))  # fmt: skip
        return time.perf_counter() - t, src.issued_total

    out = []
    for name, run in ((VSAN_SCENARIO, vsan), ("M/M/4 queue", mm4)):
        walls: dict[bool, list[float]] = {False: [], True: []}
        ios: dict[bool, set[int]] = {False: set(), True: set()}
        for r in tqdm(range(rounds), desc=f"guard cost: {name}", unit="round"):
            for limited in (False, True) if r % 2 == 0 else (True, False):
                wall, issued = run(limited)
                walls[limited].append(wall)
                ios[limited].add(issued)
        off, on = statistics.median(walls[False]), statistics.median(walls[True])
        out.append({
            "scenario": name, "build": native.status().split(" ")[0], "rounds": rounds,
            "wall_seconds_unlimited": off, "wall_seconds_limited": on, "limited_over_unlimited": on / off,
            "same_ios": ios[False] == ios[True] and len(ios[False]) == 1,
        })  # fmt: skip
    return pl.DataFrame(out)


def against_revision(revision: str, rounds: int = 5, seed: int = 1) -> pl.DataFrame:
    """The storagelab rows of :func:`bench` timed in this checkout and in git ``revision`` of its
    repository, side by side: each round runs every row once in each checkout, in a fresh process
    each, alternating which goes first (this machine's speed drifts, so neither gets the better
    minutes). One row per scenario: median wall seconds of each, their ratio (this / revision: above 1
    is a slowdown), and the simulated IOs and mean response of each, which say whether the two
    simulated the same system (a model that gained a stage does more work per IO by design).

    ``revision`` is checked out in a temporary git worktree, removed afterwards; both run with this
    Python and its installed dependencies. Raises ``ValueError`` if this package is not in a git
    checkout, the revision is unknown, or it lacks one of the rows' functions."""
    import json
    import os
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    if not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be an integer >= 1, got {rounds!r}")
    here = Path(__file__).resolve().parent.parent  # .../lib
    git = ["git", "-C", str(here)]
    top = subprocess.run([*git, "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    if top.returncode != 0:
        raise ValueError(f"bench --against needs storagelab in a git checkout; {here} is not in one")
    commit = subprocess.run([*git, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}"],
                            capture_output=True, text=True)  # fmt: skip
    if commit.returncode != 0:
        raise ValueError(f"bench --against: {revision!r} is not a commit of {top.stdout.strip()}")
    sha = commit.stdout.strip()
    rows = json.dumps(STORAGELAB_ROWS)

    def timed(lib: str) -> dict[str, list[float]]:
        env = {**os.environ, "PYTHONPATH": lib + os.pathsep + os.environ.get("PYTHONPATH", "")}
        p = subprocess.run([sys.executable, "-c", _TIME_ROWS, rows, str(seed)], env=env, capture_output=True,
                           text=True)  # fmt: skip
        if p.returncode != 0:
            raise ValueError(f"bench --against: the rows failed in {lib}:\n{p.stderr.strip()[-2000:]}")
        return json.loads(p.stdout.strip().splitlines()[-1])

    with tempfile.TemporaryDirectory(prefix="storagelab-bench-") as tmp:
        tree = str(Path(tmp) / "revision")
        add = [*git, "worktree", "add", "--detach", "--quiet", tree, sha]
        subprocess.run(add, check=True, capture_output=True)
        try:
            libs = {"revision": str(Path(tree) / "lib"), "this": str(here)}
            runs: dict[str, list[dict[str, list[float]]]] = {"revision": [], "this": []}
            for r in tqdm(range(rounds), desc=f"bench against {revision}", unit="round"):
                for which in ("revision", "this") if r % 2 == 0 else ("this", "revision"):
                    runs[which].append(timed(libs[which]))
        finally:
            subprocess.run([*git, "worktree", "remove", "--force", tree], capture_output=True)
    out = []
    for name in STORAGELAB_ROWS:
        old = statistics.median(x[name][0] for x in runs["revision"])
        new = statistics.median(x[name][0] for x in runs["this"])
        out.append({
            "scenario": name, "revision": sha[:10], "rounds": rounds,
            "wall_seconds_revision": old, "wall_seconds_this": new, "this_over_revision": new / old,
            "simulated_ios_revision": int(runs["revision"][0][name][1]), "simulated_ios_this": int(runs["this"][0][name][1]),
            "mean_ms_revision": runs["revision"][0][name][2], "mean_ms_this": runs["this"][0][name][2],
        })  # fmt: skip
    return pl.DataFrame(out)
