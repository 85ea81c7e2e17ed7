"""Data reduction: each mechanism against a hand-computed case (duplicates reach the array once, small
writes coalesce into one segment write after the delay, compression ratio from content, a
content-addressed RAM cache shared across volumes, CPU time on the appliance), and the content model's
promises."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from simpy.events import Event

from storagelab.components.data_reduction import InlineReduction, WriteCoalescer, cpu_station
from storagelab.kernel import (
    CarriedTime,
    ClosedSource,
    Component,
    Deterministic,
    FixedSampler,
    OpenSource,
    Station,
)
from storagelab.kernel.component import completion_in
from storagelab.kernel.io import IORequest
from storagelab.kernel.simulation import simulate
from storagelab.workloads.content import UNIQUE_BASE, ContentModel


class Recorder(Component):
    """A back end that completes every IO after 1 ms and remembers (time, read?, size, address)."""

    def on_bind(self) -> None:
        self.log: list[tuple[float, bool, int, int]] = []

    def submit(self, io: IORequest) -> Event:
        self.log.append((self.env.now, io.is_read, io.size, io.address))
        return completion_in(self.env, 1e-3, io)


class Volume(Component):
    """Stamps a volume number on the IOs it passes on (one clone each)."""

    def __init__(self, name: str, target: Component, volume: int) -> None:
        super().__init__(name)
        self.target, self.volume = target, volume

    def children(self) -> list[Component]:
        return [self.target]

    def submit(self, io: IORequest) -> Event:
        io.volume = self.volume
        return self.target.submit(io)


def _writes(target, per_s, size=4096, span=10**9, name="w"):
    return OpenSource(name, target, FixedSampler(size=size, read_pct=0, span=span), rate=per_s)


def test_a_stream_of_duplicate_blocks_reaches_the_array_once():
    """Every write brings the same content (one common block, no unique share): one back-end write."""
    content = ContentModel(unique_share=0.0, common_blocks=1, compression_sigma=0.0)
    array = Recorder("array")
    dr = InlineReduction("dedupe", array, content, ram_bytes=1e9)
    simulate(dr, [_writes(dr, 2000)], duration=1.0, seed=1, progress=False)
    assert dr.writes > 1500 and dr.unique_blocks == 1 and dr.dedupe_hits == dr.writes - 1
    assert [(r, s) for _t, r, s, _a in array.log] == [(False, 2048)]  # 4 KiB at the mean ratio 2


def test_small_writes_to_one_segment_become_one_write_after_the_coalescing_delay():
    """One writer, a unique 4 KiB write every 10 ms (plus the 50 us RAM acknowledgement), a 1 MiB segment
    and a 0.5 s delay: nothing reaches the array before 0.5 s; at 0.5 s exactly one write carries every
    write of the first 0.5 s."""
    content = ContentModel(unique_share=1.0, compression_mean=1.0, compression_sigma=0.0)
    array = Recorder("array")
    co = WriteCoalescer("coalescer", array, segment_bytes=1 << 20, max_delay=0.5)
    dr = InlineReduction("dedupe", array, content, ram_bytes=1e9, coalescer=co)
    src = ClosedSource("w", dr, FixedSampler(size=4096, read_pct=0, span=10**9), workers=1,
                       think=Deterministic(0.01))  # fmt: skip
    simulate(dr, [src], duration=0.6, seed=1, progress=False)
    before = [e for e in array.log if e[0] < 0.5]
    at = [e for e in array.log if 0.5 <= e[0] < 0.55]
    assert before == [] and len(at) == 1
    t, is_read, size, address = at[0]
    writes_in_window = int(0.5 // (0.01 + 50e-6)) + 1  # issued at 0, 10.05 ms, ... up to 0.5 s
    assert not is_read and t == pytest.approx(0.5) and address == 0 and size == 4096 * writes_in_window


def test_a_full_segment_is_written_at_once_at_the_log_head():
    content = ContentModel(unique_share=1.0, compression_mean=1.0, compression_sigma=0.0)
    array = Recorder("array")
    co = WriteCoalescer("coalescer", array, segment_bytes=64 * 1024, max_delay=10.0)
    dr = InlineReduction("dedupe", array, content, ram_bytes=1e9, coalescer=co)
    simulate(dr, [_writes(dr, 1000)], duration=1.0, seed=1, progress=False)
    sizes = [s for _t, _r, s, _a in array.log]
    assert sizes and set(sizes) == {64 * 1024} and len(sizes) == dr.writes * 4096 // (64 * 1024)
    assert [a for *_x, a in array.log] == [i * 64 * 1024 for i in range(len(sizes))]  # sequential


def test_compression_ratio_comes_from_the_content():
    """A fixed ratio of 2 halves the bytes; a lognormal's ratios average to its mean over many contents,
    and one content always compresses the same."""
    fixed = ContentModel(compression_mean=2.0, compression_sigma=0.0)
    assert fixed.compression_ratio(UNIQUE_BASE + 7) == 2.0
    spread = ContentModel(compression_mean=3.0, compression_sigma=0.4)
    ratios = np.array([spread.compression_ratio(UNIQUE_BASE + i) for i in range(20000)])
    assert ratios.mean() == pytest.approx(3.0, rel=0.02) and ratios.min() >= 1.0
    assert spread.compression_ratio(UNIQUE_BASE + 5) == spread.compression_ratio(UNIQUE_BASE + 5)
    array = Recorder("array")
    dr = InlineReduction(
        "dedupe", array, ContentModel(unique_share=1.0, compression_sigma=0.0), ram_bytes=1e9
    )
    simulate(dr, [_writes(dr, 500, size=8192)], duration=1.0, seed=1, progress=False)
    assert sum(s for _t, _r, s, _a in array.log) == dr.writes * 8192 // 2


def test_ram_cache_is_content_addressed_across_volumes():
    """Two clones read the same 64 base-image blocks: each block is read from the array once, by whichever
    clone reads it first; the other clone finds it in RAM."""
    content = ContentModel(image_bytes=64 * 4096, unique_share=0.0)
    array = Recorder("array")
    dr = InlineReduction("dedupe", array, content, ram_bytes=1e9)
    v0, v1 = Volume("clone 0", dr, 0), Volume("clone 1", dr, 1)
    sources = [
        ClosedSource(f"reader {i}", v, FixedSampler(size=4096, read_pct=100, span=64 * 4096), workers=1)
        for i, v in enumerate((v0, v1))
    ]
    simulate(v0, sources, duration=1.0, seed=1, progress=False)
    assert dr.read_blocks > 1000 and len(array.log) == 64 and dr.read_misses == 64


def test_diverged_blocks_are_each_clones_own():
    """With a quarter of each clone's blocks diverged before the run, the array serves every distinct
    content once: the shared base blocks once, each clone's own blocks once per clone."""
    content = ContentModel(image_bytes=64 * 4096, unique_share=0.25)
    state = content.bind(np.random.default_rng(0))
    distinct = {state.read(v, b) for v in (0, 1) for b in range(64)}
    own = sum(1 for v in (0, 1) for b in range(64) if state.read(v, b) >= 64)
    assert 20 < own < 44 and len(distinct) == own + len(
        {state.read(v, b) for v in (0, 1) for b in range(64)}
        - {state.read(v, b) for v in (0, 1) for b in range(64) if state.read(v, b) >= 64}
    )
    array = Recorder("array")
    dr = InlineReduction("dedupe", array, content, ram_bytes=1e9)
    v0, v1 = Volume("clone 0", dr, 0), Volume("clone 1", dr, 1)
    sources = [
        ClosedSource(f"reader {i}", v, FixedSampler(size=4096, read_pct=100, span=64 * 4096), workers=1)
        for i, v in enumerate((v0, v1))
    ]
    simulate(v0, sources, duration=1.0, seed=1, progress=False)
    assert len(array.log) == len(distinct)


def test_ram_holds_only_what_fits():
    """RAM for 100 compressed blocks (2 KiB each at ratio 2) and 4,096 base blocks read uniformly at
    random: LRU keeps 100, and under independent uniform references an LRU of C of N items holds any
    given item with probability C / N, so a read hits with probability p = 100 / 4,096 = 2.44 %. The
    measured ratio is a binomial proportion over the blocks read: within 4 standard deviations of p
    (about 1.5 to 3.4 % over 4,000 reads). A cache that never hit, kept everything (about 37 % over
    4,000 reads of 4,096 blocks) or twice the RAM (4.9 %) would fall outside."""
    content = ContentModel(image_bytes=4096 * 4096, compression_sigma=0.0, unique_share=0.0)
    small = InlineReduction("dedupe", Recorder("array"), content, ram_bytes=100 * 2048)
    src = ClosedSource("r", small, FixedSampler(size=4096, read_pct=100, span=4096 * 4096), workers=4)
    simulate(small, [src], duration=1.0, seed=1, progress=False)
    p, n = 100 / 4096, small.read_blocks
    assert len(small.ram) == 100 and n > 3000
    assert small.stats(1.0)["read_hit_ratio"] == pytest.approx(p, abs=4 * math.sqrt(p * (1 - p) / n))


def test_cpu_time_is_charged_on_the_appliance():
    """One core, 4 KiB unique writes costing fingerprint (10 us) + compression (20 ns/B) each: the core
    saturates at 1 / 91.92 us writes per second."""
    content = ContentModel(unique_share=1.0, compression_sigma=0.0)
    per_write = 10e-6 + 4096 * 20e-9
    dr = InlineReduction("dedupe", Recorder("array"), content, ram_bytes=1e9, fingerprint_time=10e-6,
                         compress_time_per_byte=20e-9, cpu=cpu_station("cpu", 1))  # fmt: skip
    src = ClosedSource("w", dr, FixedSampler(size=4096, read_pct=0, span=10**9), workers=8)
    res = simulate(dr, [src], duration=1.0, warmup=0.1, seed=1, progress=False)
    assert res.summary()["iops"][0] == pytest.approx(1 / per_write, rel=0.01)


def test_cpu_jobs_carrying_their_time_take_the_fast_path_with_the_same_results():
    """The appliance's cores serve jobs whose time each carries (:class:`CarriedTime`): known at arrival,
    so the FIFO station computes completions then, and the appliance schedules one event per IO at the
    later of its RAM time and its CPU time instead of joining two; every latency is the same as serving
    each job when a core frees (the general path, the same time given as a plain callable)."""

    def run(cpu: Station) -> list[float]:
        content = ContentModel(unique_share=0.5, compression_sigma=0.3)
        dr = InlineReduction("dedupe", Recorder("array"), content, ram_bytes=1e6, fingerprint_time=10e-6,
                             compress_time_per_byte=20e-9, read_time=30e-6, cpu=cpu)  # fmt: skip
        src = ClosedSource("rw", dr, FixedSampler(size=8192, read_pct=60, span=10**7), workers=6)
        res = simulate(dr, [src], duration=0.3, warmup=0.05, seed=3, progress=False)
        assert cpu.fast is isinstance(cpu.service_source, CarriedTime)
        return [*res.summary()["mean_ms"].to_list(), res.summary()["iops"][0], cpu.stats(0.25)["completed"]]

    fast = run(cpu_station("cpu", 2))
    general = run(Station("cpu", lambda io, rng: io.tag, servers=2))
    assert fast == general and fast[-1] > 1000


def test_an_open_source_records_read_hits_at_arrival_with_the_same_results():
    """A read whose blocks are all in RAM, on cores that say at arrival when its work completes, returns
    that time to an open-loop source (``submit_known``), which records it then: no event for it. The run
    is the one the general path gives (one event per IO, each core job served when a core frees, the
    job's time handed over without an IO object), with reads that miss and writes among them."""

    def run(cpu: Station, shortcuts: bool):
        content = ContentModel(unique_share=0.5, compression_sigma=0.3)
        dr = InlineReduction("dedupe", Recorder("array"), content, ram_bytes=4e6, fingerprint_time=10e-6,
                             compress_time_per_byte=20e-9, read_time=30e-6, cpu=cpu)  # fmt: skip
        src = OpenSource("rw", dr, FixedSampler(size=8192, read_pct=80, span=10**7), rate=20000.0,
                         shortcuts=shortcuts)  # fmt: skip
        res = simulate(dr, [src], duration=0.5, warmup=0.05, seed=3, progress=False)
        return res, dr.stats(0.45)

    (fast, fast_stats), (slow, slow_stats) = (
        run(cpu_station("cpu", 2), True),
        run(Station("cpu", lambda io, rng: io.tag, servers=2), False),
    )
    assert fast.summary().equals(slow.summary())
    assert fast.service_level_curve().equals(slow.service_level_curve())
    assert fast_stats == slow_stats and 0.5 < fast_stats["read_hit_ratio"] < 1
    a, b = fast.littles_law().row(0, named=True), slow.littles_law().row(0, named=True)
    assert a["L_time_average"] == pytest.approx(b["L_time_average"], rel=1e-9)
    assert fast.events < slow.events / 2  # the read hits needed no event


def test_content_model_is_deterministic_per_seed_and_refuses_bad_settings():
    def run(seed):
        dr = InlineReduction("dedupe", Recorder("array"), ContentModel(unique_share=0.3), ram_bytes=1e8)
        simulate(dr, [_writes(dr, 3000, span=10**7)], duration=1.0, seed=seed, progress=False)
        return dr.unique_blocks, dr.dedupe_hits, dr.stored_bytes

    assert run(3) == run(3) and run(3) != run(4)
    with pytest.raises(ValueError, match="unique_share"):
        ContentModel(unique_share=1.5)
    with pytest.raises(ValueError, match="compression_mean"):
        ContentModel(compression_mean=0.5)
    with pytest.raises(ValueError, match="same back end"):
        InlineReduction("x", Recorder("a"), ContentModel(), ram_bytes=1e6,
                        coalescer=WriteCoalescer("c", Recorder("b")))  # fmt: skip


def test_an_image_larger_than_the_ram_is_pinned_as_far_as_it_fits():
    """RAM for 500 compressed blocks and a 1,000-block image: 450 blocks (90 %) are resident from the
    start and never read from the array; the others are read from it on demand."""
    content = ContentModel(image_bytes=1000 * 4096, unique_share=0.0, compression_sigma=0.0)
    array = Recorder("array")
    dr = InlineReduction("dedupe", array, content, ram_bytes=500 * 2048, image_in_ram=True)
    src = ClosedSource("r", dr, FixedSampler(size=4096, read_pct=100, span=1000 * 4096), workers=2)
    simulate(dr, [src], duration=0.5, seed=1, progress=False)
    assert dr._pinned == 450 and array.log
    assert all(address // 4096 >= 450 for _t, _r, _s, address in array.log)
    assert dr.stored_bytes == 1000 * 2048  # the image is stored once whatever the RAM holds


def test_content_draws_hand_each_block_out_last_value_first():
    """The draws behind the results: the unique-or-common choice takes the generator's uniforms 4096 at
    a time, each block last value first (the order the committed results were produced with)."""
    contents = ContentModel().bind(np.random.default_rng(7))
    block = np.random.default_rng(7).random(4096)
    assert [contents._uniform() for _ in range(4096)] == block[::-1].tolist()


class WriteCounter(Component):
    """Passes IOs on, counting what is written: bytes, and the ``block``-byte blocks each write touches
    (from its address and size, independently of the reduction layer)."""

    def __init__(self, name: str, target: Component, block: int) -> None:
        super().__init__(name)
        self.target, self.block = target, block

    def children(self) -> list[Component]:
        return [self.target]

    def on_bind(self) -> None:
        self.bytes = self.blocks = 0

    def submit(self, io: IORequest) -> Event:
        if not io.is_read:
            self.bytes += io.size
            self.blocks += (io.address + io.size - 1) // self.block - io.address // self.block + 1
        return self.target.submit(io)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    block=st.sampled_from([512, 4096, 8192]),
    unique_share=st.floats(0.0, 1.0),
    common_blocks=st.integers(1, 2000),
    common_skew=st.floats(0.0, 2.0),
    compression=st.tuples(st.floats(1.0, 4.0), st.floats(0.0, 1.0)),
    io_blocks=st.integers(1, 4),
    unaligned=st.booleans(),
    span_blocks=st.integers(16, 4096),
    read_pct=st.sampled_from([0, 30, 70]),
    seed=st.integers(1, 10**6),
)
def test_every_byte_written_is_referenced_once_by_a_stored_chunk_or_a_dedupe_reference(
    block,
    unique_share,
    common_blocks,
    common_skew,
    compression,
    io_blocks,
    unaligned,
    span_blocks,
    read_pct,
    seed,
):
    """Conservation in inline deduplication, for generated content (unique share, common pool and its
    skew, compression), IO sizes (aligned to the block or not), footprints and read mixes. Every block a
    write touches is, at that moment, either new content (stored once: one chunk of ``block / ratio``
    bytes, sent to the back end) or content already stored (one more reference, nothing stored or sent).
    So, with ``refs`` the references per stored content:

    - the blocks written = sum of refs = stored chunks + dedupe references, and for block-aligned writes
      the bytes written = ``block`` x sum of refs;
    - every stored chunk has at least one reference, and only stored chunks have references;
    - the bytes stored = the sum over stored chunks of ``block / ratio``, and the bytes sent to the back
      end are those (each within half a byte per write: a back-end write carries whole bytes)."""
    mean, sigma = compression
    content = ContentModel(block_bytes=block, image_bytes=64 * block, unique_share=unique_share,
                           common_blocks=common_blocks, common_skew=common_skew, compression_mean=mean,
                           compression_sigma=sigma)  # fmt: skip
    size = io_blocks * block + (block // 2 if unaligned else 0)
    array = Recorder("array")
    dr = InlineReduction("dedupe", array, content, ram_bytes=1e6)
    counter = WriteCounter("counter", dr, block)
    sampler = FixedSampler(size=size, read_pct=read_pct, span=span_blocks * block + size)
    simulate(
        counter, [OpenSource("w", counter, sampler, rate=2000.0)], duration=0.2, seed=seed, progress=False
    )

    refs = sum(dr.refs.values())
    assert counter.blocks == dr.write_blocks == refs == dr.unique_blocks + dr.dedupe_hits
    if not unaligned:
        assert counter.bytes == block * refs
    assert set(dr.refs) == set(dr.stored) and min(dr.refs.values(), default=1) >= 1
    assert len(dr.stored) == dr.unique_blocks
    assert dr.stored_bytes == pytest.approx(sum(block / content.compression_ratio(c) for c in dr.stored))
    assert dr.bytes_to_backend == pytest.approx(dr.stored_bytes)
    sent = sum(s for _t, is_read, s, _a in array.log if not is_read)
    assert abs(sent - dr.bytes_to_backend) <= 0.5 * dr.backend_writes + 1e-6
