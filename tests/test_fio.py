"""fio in and out: job files read into access specs (with clear errors for what is not supported), specs
written as fio jobs, fio iologs and blkparse output replayed with their timestamps, and a round trip
through real fio (Debian package ``fio``; skipped with a message when it is not installed)."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from storagelab.kernel import Exponential, Station
from storagelab.kernel.simulation import simulate
from storagelab.workloads import AccessSpec
from storagelab.workloads.access_spec import SizeShare
from storagelab.workloads.fio import FioJobError, fio_size, fio_time_s, read_fio_jobs
from storagelab.workloads.locality import Uniform, Zipf
from storagelab.workloads.traces import TraceError, read_blkparse, read_fio_iolog

JOBS = """\
; two jobs sharing global options
[global]
ioengine=libaio
direct=1
filename=/dev/sdb
size=10g
time_based
runtime=60

[oltp]
rw=randrw
rwmixread=70
bs=8k
iodepth=16
numjobs=4
random_distribution=zipf:1.1

[web]
rw=randread
bssplit=512/22:1k/15:2k/8:4k/23:8k/15:16k/2:32k/6:64k/7:128k/1:512k/1
ba=512
offset=1g
rate_iops=500
thinktime=2ms
thinktime_blocks=4
"""


def test_fio_sizes_and_times():
    assert (
        fio_size("4k") == 4096
        and fio_size("1m") == 1 << 20
        and fio_size("512") == 512
        and fio_size("10g") == 10 << 30
    )
    assert fio_time_s("500") == pytest.approx(500e-6) and fio_time_s("2ms") == pytest.approx(2e-3)
    with pytest.raises(ValueError, match="not a fio size"):
        fio_size("4 kilo")


def test_job_file_reads_into_specs(tmp_path):
    path = tmp_path / "mix.fio"
    path.write_text(JOBS)
    oltp, web = read_fio_jobs(path)
    assert oltp.spec.sizes == (SizeShare(size=8192, pct=100),)
    assert (oltp.spec.read_pct, oltp.spec.random_pct, oltp.spec.queue_depth) == (70, 100, 16)
    assert oltp.numjobs == 4 and oltp.span == 10 << 30 and oltp.rate_iops is None
    assert isinstance(oltp.locality, Zipf) and oltp.locality.alpha == pytest.approx(1.1)
    assert web.spec.read_pct == 100 and len(web.spec.sizes) == 10 and web.spec.align == 512
    assert web.offset == 1 << 30 and web.rate_iops == 500 and isinstance(web.locality, Uniform)
    assert (web.spec.burst_length, web.spec.burst_delay) == (4, pytest.approx(2e-3))
    assert AccessSpec.from_fio(path, job="web") == web.spec


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[j]\nrw=randrw\nverify=md5\n", ["job [j]", "verify", "not supported"]),
        ("[j]\nrw=trim\n", ["job [j]", "rw='trim'", "randrw"]),
        (
            "[j]\nrw=randread\nrandom_distribution=normal:50\n",
            ["random_distribution='normal:50'", "zipf:theta"],
        ),
        ("[j]\nbs=4k,64k\n", ["separate read/write sizes"]),
        ("[j]\nbs=4 kilo\n", ["not a fio size"]),
        ("[j]\nbssplit=4k/60:8k/60\n", ["sum"]),
        ("[global]\nbs=4k\n", ["no job section"]),
    ],
)
def test_unsupported_job_options_are_refused_clearly(tmp_path, text, words):
    path = tmp_path / "bad.fio"
    path.write_text(text)
    with pytest.raises(FioJobError) as err:
        read_fio_jobs(path)
    assert str(path) in str(err.value) and all(w in str(err.value) for w in words), str(err.value)


def test_several_jobs_need_a_name(tmp_path):
    path = tmp_path / "mix.fio"
    path.write_text(JOBS)
    with pytest.raises(FioJobError, match=r"2 jobs .*name one with job="):
        AccessSpec.from_fio(path)
    with pytest.raises(FioJobError, match=r"no job \[nope\]"):
        AccessSpec.from_fio(path, job="nope")


def test_a_spec_written_as_fio_reads_back_the_same(tmp_path):
    from storagelab.workloads import IOMETER_WEB_SERVER

    spec = IOMETER_WEB_SERVER.model_copy(update={"queue_depth": 8, "burst_length": 3, "burst_delay": 0.07})
    path = tmp_path / "web.fio"
    path.write_text(spec.to_fio(filename="/tmp/x.dat", size=1 << 30))
    back = AccessSpec.from_fio(path)
    for field in ("sizes", "read_pct", "random_pct", "align", "queue_depth", "burst_length", "burst_delay"):
        assert getattr(back, field) == getattr(spec, field), field


def test_iolog_v2_v3_and_blkparse_are_read_with_their_times(tmp_path):
    v2 = tmp_path / "v2.log"
    v2.write_text(
        "fio version 2 iolog\n/f add\n/f open\n/f read 0 4096\n/f wait 1000\n/f write 8192 8192\n/f close\n"
    )
    t = read_fio_iolog(v2)
    assert t.times.tolist() == [0.0, pytest.approx(1e-3)] and t.is_read.tolist() == [True, False]
    assert t.size.tolist() == [4096, 8192] and t.address.tolist() == [0, 8192]
    v3 = tmp_path / "v3.log"
    v3.write_text(
        "fio version 3 iolog\n0 /f add\n5 /f open\n10 /f write 4096 512\n2010 /f read 0 4096\n2020 /f close\n"
    )
    t = read_fio_iolog(v3)
    assert t.times.tolist() == [0.0, pytest.approx(2e-3)] and t.is_read.tolist() == [False, True]
    blk = tmp_path / "blk.txt"
    blk.write_text(
        "  8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]\n"
        "  8,0    3        2     0.000001000   697  G   W 223490 + 8 [kjournald]\n"
        "  8,0    1        5     0.004000000   700  Q   R 1000 + 16 [fio]\n"
        "CPU0 (8,0):\n Reads Queued: 1, 8KiB\n"
    )
    t = read_blkparse(blk)
    assert t.times.tolist() == [0.0, pytest.approx(4e-3)] and t.size.tolist() == [4096, 8192]
    assert t.address.tolist() == [223490 * 512, 1000 * 512] and t.is_read.tolist() == [False, True]
    bad = tmp_path / "bad.log"
    bad.write_text("fio version 3 iolog\n0 /f add\nx /f read 0 1\n")
    with pytest.raises(TraceError, match=r"bad\.log, line 3"):
        read_fio_iolog(bad)


def test_a_trace_replays_at_its_timestamps():
    from storagelab.workloads.traces import Trace

    trace = Trace(np.array([0.0, 0.001, 0.001, 0.010]), np.array([True, False, True, True]),
                  np.array([4096] * 4), np.array([0, 4096, 8192, 0]))  # fmt: skip
    station = Station("disk", Exponential(1e-4), servers=1)
    src = trace.source("replay", station)
    res = simulate(station, [src], duration=0.05, seed=1, progress=False)
    assert src.issued_total == 4 and res.summary()["count"].sum() == 4


@pytest.mark.skipif(
    shutil.which("fio") is None, reason="fio is not installed: apt-get install fio (Debian package)"
)
def test_real_fio_runs_an_exported_spec_and_its_iolog_replays(tmp_path):
    spec = AccessSpec(name="mix", sizes=(SizeShare(size=4096, pct=75), SizeShare(size=65536, pct=25)),
                      read_pct=70, random_pct=100, align=4096, queue_depth=1)  # fmt: skip
    job = spec.to_fio(
        filename=str(tmp_path / "data.bin"), size=8 << 20, runtime_s=0.3, ioengine="psync", direct=False
    )
    job += f"write_iolog={tmp_path / 'mix.iolog'}\n"
    (tmp_path / "mix.fio").write_text(job)
    assert AccessSpec.from_fio(tmp_path / "mix.fio").sizes == spec.sizes  # the job fio runs is the spec
    subprocess.run(
        ["fio", str(tmp_path / "mix.fio"), "--output", str(tmp_path / "out.txt")], check=True, timeout=120
    )
    trace = read_fio_iolog(tmp_path / "mix.iolog")
    assert len(trace) > 100
    assert set(trace.size.tolist()) <= {4096, 65536} and np.all(trace.address % 4096 == 0)
    assert np.all(trace.address + trace.size <= 8 << 20)
    assert 0.55 < trace.is_read.mean() < 0.85  # 70 % reads, within sampling noise
    station = Station("disk", Exponential(1e-5), servers=4)
    src = trace.source("replay", station)
    simulate(station, [src], duration=trace.duration + 0.01, seed=1, progress=False)
    assert src.issued_total == len(trace)
