"""The lab (issue 70): plans, the cgroup refusals, fio's access laws as the prediction draws them, and, where
cgroups can be created (root, cgroup v1 memory+blkio or v2 memory+io) and fio is installed, a small real run
(the quick plan: about 12 s of fio) and an interrupted run that must leave no cgroup behind."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from storagelab.lab import cgroup
from storagelab.lab.plan import QUICK_PLAN, LabPlanError, load_lab_plan
from storagelab.lab.predict import THROTL_SLICE_S, fio_blocks

ROOT = Path(__file__).resolve().parents[1]


def _lab_reason() -> str | None:
    """Why the real lab cannot run here, or None."""
    if shutil.which("fio") is None:
        return "fio is not installed"
    try:
        cgroup.require()
    except cgroup.CgroupUnavailable as err:
        return str(err)
    return None


REASON = _lab_reason()
needs_cgroups = pytest.mark.skipif(REASON is not None, reason=f"the lab cannot run here: {REASON}")


def test_the_committed_plan_loads_and_a_bad_one_is_named(tmp_path):
    plan = load_lab_plan(ROOT / "measurements/lab-vda/plan.yaml")
    assert plan.memory_limit == 128 * 2**20 and len(plan.cache.planned()) == 24
    assert len(plan.throttle.scenarios) == 7
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "file_size: 64MiB\nmemory_limit: 32MiB\ncache: {points: [{distribution: zipf:1, working_set: 1}]}\n"
    )
    with pytest.raises(LabPlanError, match="zipf"):
        load_lab_plan(bad)
    bad.write_text("file_size: 64MiB\nmemory_limit: 32MiB\ncache: {points: [{working_set: 4}]}\n")
    with pytest.raises(LabPlanError, match="exceeds file_size"):
        load_lab_plan(bad)


def test_refusals_name_what_is_missing(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(cgroup.CgroupUnavailable, match="not root"):
        cgroup.detect()
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(cgroup, "_mounted", lambda: {"memory": Path("/sys/fs/cgroup/memory")})
    with pytest.raises(cgroup.CgroupUnavailable, match="blkio hierarchy nor a cgroup v2"):
        cgroup.detect()
    monkeypatch.setattr(cgroup, "_mounted", lambda: {})
    with pytest.raises(cgroup.CgroupUnavailable, match="memory and blkio"):
        cgroup.detect()


def test_fio_laws_as_drawn():
    """Pareto 0.9 is fio's 90/10 rule; Zipf 1.2 is more skewed than 0.8; over a power-of-two number of
    blocks fio's hash is a permutation (every block reachable under uniform-rank draws)."""
    rng = np.random.default_rng(1)
    n = 2**14
    for dist, top10 in (("pareto:0.9", (0.85, 0.95)), ("zipf:1.2", (0.8, 1.0)), ("zipf:0.8", (0.4, 0.75))):
        b = fio_blocks(dist, n, 200_000, rng)
        counts = np.sort(np.bincount(b, minlength=n))[::-1]
        share = counts[: n // 10].sum() / counts.sum()
        assert top10[0] <= share <= top10[1], (dist, share)
    u = fio_blocks("random", n, 200_000, rng)
    assert np.sort(np.bincount(u, minlength=n))[::-1][: n // 10].sum() / 200_000 < 0.2  # noise only
    ranks = np.arange(n, dtype=np.uint64) * np.uint64(0x61C8864680B583EB) % np.uint64(n)
    assert len(set(ranks.tolist())) == n
    assert THROTL_SLICE_S == 0.1


@needs_cgroups
def test_a_small_lab_runs_for_real_and_cleans_up(tmp_path):
    from storagelab.lab.run import run_lab

    target = tmp_path / "lab.dat"
    tables = run_lab(QUICK_PLAN, target, tmp_path / "out")
    cache, throttle = tables["cache.csv"], tables["throttle.csv"]
    hits = dict(zip(cache["point"], cache["hit_ratio"], strict=True))
    assert hits["cache-random-ws0.5-r100"] > 0.98  # half the limit: every read a hit
    assert 0.15 < hits["cache-random-ws2-r100"] < 0.65  # twice the limit: about the cached share
    assert hits["cache-zipf1.2-ws2-r100"] > hits["cache-random-ws2-r100"] + 0.2
    limited = throttle.filter(throttle["scenario"] == "iops200", throttle["throttled"]).row(0, named=True)
    # the limit caps the tenant (a stall of the shared disk can only lower it: see measurements/README.md)
    assert 100 < limited["iops"] < 200 * 1.15
    free = throttle.filter(throttle["scenario"] == "iops200", ~throttle["throttled"]).row(0, named=True)
    assert free["iops"] > 5 * limited["iops"]
    bps = throttle.filter(throttle["scenario"] == "bps2m").row(0, named=True)
    assert 1.0 < bps["mb_s"] < 2.0 * 1.15
    assert not target.exists()
    assert not [p for p in cgroup.leftover_groups() if f"-{os.getpid()}-" in p.name]
    prov = (tmp_path / "out" / "provenance.json").read_text()
    assert '"cgroup_version"' in prov and '"fio_version"' in prov and '"kernel"' in prov


@needs_cgroups
def test_an_interrupted_run_leaves_no_cgroup(tmp_path):
    """A child running the lab gets SIGINT while fio runs in its group: the group is gone afterwards."""
    script = textwrap.dedent(f"""
        from storagelab.lab.plan import QUICK_PLAN
        from storagelab.lab.run import run_lab
        plan = QUICK_PLAN.model_copy(update={{"throttle": None}})
        run_lab(plan, {str(tmp_path / "lab.dat")!r}, {str(tmp_path / "out")!r})
    """)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    child = subprocess.Popen([sys.executable, "-c", script], env=env, stderr=subprocess.PIPE, text=True)
    mine = lambda: [p for p in cgroup.leftover_groups() if f"-{child.pid}-" in p.name]  # noqa: E731
    deadline = time.monotonic() + 60
    while not mine() and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.05)
    assert mine(), "the child never created its group"
    time.sleep(0.3)  # fio is running in it
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    assert child.returncode != 0 and "KeyboardInterrupt" in err
    assert mine() == []
    assert not (tmp_path / "lab.dat").exists()


def test_the_readmes_state_the_committed_shares():
    """measurements/README.md and the README state the shares that `storagelab lab-predict` wrote
    (measurements/lab-vda/shares.csv), each as "W of N"."""
    import polars as pl

    shares = pl.read_csv(ROOT / "measurements/lab-vda/shares.csv")
    notes = (ROOT / "measurements/README.md").read_text()
    section = notes[notes.index("## `lab-vda`") :]
    readme = (ROOT / "README.md").read_text()
    lab_section = readme[readme.index("## The lab:") : readme.index("## Sweeps")]
    for r in shares.iter_rows(named=True):
        assert f"{r['within']} of {r['points']}" in section, r
    got = {(r["mechanism"], r["metric"]): (r["within"], r["points"]) for r in shares.iter_rows(named=True)}
    for key in (("page cache", "hit"), ("page cache", "iops"), ("blk-throttle: throttled tenant", "iops")):
        assert "{} of {}".format(*got[key]) in lab_section, key


def test_the_cgroup_v2_fallback_writes_memory_max_and_io_max(tmp_path, monkeypatch):
    """Without the v1 hierarchies, a cgroup v2 mount with the memory and io controllers is used: the limits
    go to memory.max and io.max, the counters come from io.stat and memory.stat (a folder stands in for the
    cgroup2 file system here; the kernel's own files are written and read the same way)."""
    root = tmp_path / "unified"
    root.mkdir()
    (root / "cgroup.controllers").write_text("cpu io memory pids\n")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(cgroup, "_mounted", lambda: {"v2": root})
    assert cgroup.require() == 2
    limits = cgroup.Limits(memory_bytes=64 * 2**20, device="254:0", read_iops=500, read_bps=4_000_000)
    group = cgroup.create(limits, label="t")
    path = group.paths["v2"]
    assert path.parent == root and path.name.startswith(f"{cgroup.PREFIX}-t-{os.getpid()}-")
    assert (path / "memory.max").read_text() == str(64 * 2**20)
    assert (path / "io.max").read_text() == "254:0 riops=500 rbps=4000000\n"
    (path / "io.stat").write_text(
        "8:0 rbytes=1 rios=1\n254:0 rbytes=8192 wbytes=0 rios=2 wios=0 dbytes=0 dios=0\n"
    )
    assert group.io_counts("254:0") == {"read_ios": 2, "write_ios": 0, "read_bytes": 8192, "write_bytes": 0}
    (path / "memory.stat").write_text("anon 4096\nfile 8192\nshmem 0\nactive_file 4096\ninactive_file 4096\n")
    (path / "memory.current").write_text("16384\n")
    assert group.memory_stat()["cache"] == 8192 and group.memory_stat()["usage"] == 16384
    monkeypatch.setattr(cgroup, "_mounted", lambda: {"memory": Path("/m")})  # v1 blkio and v2 both missing
    with pytest.raises(cgroup.CgroupUnavailable, match="blkio hierarchy nor a cgroup v2"):
        cgroup.detect()
    (root / "cgroup.controllers").write_text("cpu pids\n")
    monkeypatch.setattr(cgroup, "_mounted", lambda: {"v2": root})
    with pytest.raises(cgroup.CgroupUnavailable, match=r"lacks the memory and io controller"):
        cgroup.detect()


def test_the_two_list_sketch_promotes_on_a_second_access_and_holds_its_capacity():
    from storagelab.lab.predict import TwoListSketch

    s = TwoListSketch(100)
    assert not s.access(1) and 1 in s.inactive
    assert s.access(1) and 1 in s.active  # the read that missed marked it: the next access activates it
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 400, 60_000).tolist()
    for k in keys[:20_000]:
        s.access(k)
    hits = sum(s.access(k) for k in keys[20_000:])
    assert len(s.inactive) + len(s.active) <= 100
    assert len(s.inactive) >= len(s.active) - 1
    assert hits / 40_000 == pytest.approx(0.25, abs=0.02)  # uniform access: the cached share


def test_every_cache_group_turns_the_kernels_io_counting_on(monkeypatch, tmp_path):
    """On cgroup v1 the kernel counts a group's device IOs only on a disk some throttle rule was set on since
    boot (blk-throttle's ``blk_should_throtl``): a first lab run on a fresh machine read every cache point as
    all hits (1.0 at twice the limit in CI). Each cache group carries a read throttle no disk reaches."""
    from storagelab.lab import cgroup, run

    made = []

    class Stop(Exception):
        pass

    def create(limits, version=None, label=""):
        made.append(limits)
        raise Stop

    monkeypatch.setattr(cgroup, "create", create)
    point = QUICK_PLAN.cache.points[0]
    with pytest.raises(Stop):
        run._cache_point(QUICK_PLAN, point, tmp_path / "lab.dat", tmp_path, [], "254:0", "measured")
    assert made[0].memory_bytes == QUICK_PLAN.memory_limit
    assert made[0].throttles() == {"read_iops": run.ACCOUNTING_IOPS} and made[0].device == "254:0"
    assert run.ACCOUNTING_IOPS >= 10**9  # never binding: no disk serves a billion IOs per second
