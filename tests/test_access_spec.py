"""Iometer access specs: size parsing, the YAML loader and its messages, the published specs, and the
statistics and address rules of the vectorized sampler."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from storagelab.published import datasets
from storagelab.workloads import (
    IOMETER_4K_70_30_RANDOM,
    IOMETER_WEB_SERVER,
    AccessSpec,
    AccessSpecError,
    HotSpot,
    Uniform,
    Zipf,
    load_access_specs,
    parse_size,
)

DATA = Path(__file__).parent / "data" / "access_specs"
N = 200_000


def four_sigma(n: int, p: float) -> float:
    """4 standard deviations of a Binomial(n, p) count. A fixed-seed test either passes or not, but for
    a correct sampler the chance that one such check fails is 6.3e-5 (normal two-sided tail at 4 sigma;
    n*p >= 2,000 in every check here, so the normal approximation holds); over the dozen checks per
    test that is < 1e-3, so a failure means a wrong share, not bad luck."""
    return 4.0 * math.sqrt(n * p * (1.0 - p))


def spec(**overrides) -> AccessSpec:
    body = {"name": "t", "sizes": [{"size": "4K", "pct": 100}], "read_pct": 50, "random_pct": 50}
    return AccessSpec.model_validate(body | overrides)


def expected_next(address: int, size: int, align: int) -> int:
    """Documented rule: a sequential IO starts at the previous IO's end rounded up to ``align``."""
    return -(-(address + size) // align) * align


# --- size strings -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("512", 512),
        ("512B", 512),
        ("4K", 4096),
        ("4k", 4096),
        ("4KB", 4096),
        ("4KiB", 4096),
        ("64KiB", 65536),
        (" 8 kb ", 8192),
        ("1M", 1048576),
        ("1 MB", 1048576),
        ("2G", 2 * 1024**3),
        (8192, 8192),
        (np.int64(4096), 4096),
    ],
)
def test_parse_size_uses_iometer_binary_prefixes(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["4.5K", "-4K", "4X", "", "K", "4 K B", "4KiBB", True, 4096.0, None])
def test_parse_size_rejects_other_forms(text):
    with pytest.raises(ValueError, match=r"is not a size; use a whole number of bytes"):
        parse_size(text)


@pytest.mark.parametrize("value", [0, -512, "0K"])
def test_parse_size_rejects_non_positive(value):
    with pytest.raises(ValueError, match=r"size must be > 0 bytes, got"):
        parse_size(value)


# --- loading YAML -------------------------------------------------------------------------------


def test_single_spec_file_equals_the_published_web_server_spec():
    specs = load_access_specs(DATA / "web_server.yaml")
    assert list(specs) == ["Iometer web server"]
    assert specs["Iometer web server"] == IOMETER_WEB_SERVER


def test_mapping_form_takes_names_from_keys_and_keeps_defaults():
    specs = load_access_specs(DATA / "standard_specs.yaml")
    assert list(specs) == ["Iometer 4K 70/30 random QD1", "64K sequential read", "OLTP 8K bursty"]
    assert specs["Iometer 4K 70/30 random QD1"] == IOMETER_4K_70_30_RANDOM
    seq = specs["64K sequential read"]
    assert (seq.sizes[0].size, seq.align, seq.queue_depth, seq.random_pct) == (65536, 65536, 8, 0)
    assert (seq.burst_length, seq.burst_delay) == (1, 0.0)
    oltp = specs["OLTP 8K bursty"]
    assert (oltp.burst_length, oltp.burst_delay, oltp.align) == (16, 0.005, 8192)


def test_list_form():
    specs = load_access_specs(DATA / "list_form.yaml")
    assert list(specs) == ["backup stream", "VDI steady state"]
    assert [s.size for s in specs["backup stream"].sizes] == [262144, 1048576]
    vdi = specs["VDI steady state"]
    assert [(s.size, s.pct) for s in vdi.sizes] == [(4096, 60), (32768, 40)]
    assert vdi.align == 512  # default
    assert vdi.mean_size == pytest.approx(0.6 * 4096 + 0.4 * 32768)


@pytest.mark.parametrize(
    ("file", "message"),
    [
        ("web.yaml", "spec 'web server', key 'sizes': percentages sum to 99.0, must sum to 100"),
        ("negative_size.yaml", "spec 'negative', key 'sizes[0].size': size must be > 0 bytes, got -512"),
        (
            "unknown_key.yaml",
            "spec 'typo', key 'outstanding_ios': unknown key; allowed keys: name, sizes, read_pct, "
            "random_pct, align, burst_length, burst_delay, queue_depth",
        ),
        ("read_pct_120.yaml", "spec 'too many reads', key 'read_pct': must be <= 100, got 120"),
        (
            "bad_size_string.yaml",
            "spec 'bad size', key 'sizes[1].size': size '4.5K' is not a size; use a whole number of bytes "
            "or a string like '512', '4K', '64KiB', '1M' (K = 1024)",
        ),
    ],
)
def test_invalid_files_give_one_message_naming_file_spec_key_and_rule(file, message):
    path = DATA / "invalid" / file
    with pytest.raises(AccessSpecError) as info:
        load_access_specs(path)
    assert str(info.value) == f"{path}: {message}"


def test_missing_file(tmp_path):
    path = tmp_path / "nope.yaml"
    with pytest.raises(AccessSpecError, match=r"nope\.yaml: no such file$"):
        load_access_specs(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "holds no access spec; expected one spec"),
        ("[1, 2]", "spec #1: must be a mapping of keys, got 1"),
        ("name: [unclosed", "not valid YAML"),
        ("a: {sizes: [{size: 4K, pct: 100}], read_pct: 1, random_pct: 1, name: b}", "spec 'a', key 'name'"),
        (
            "- {name: x, sizes: [{size: 4K, pct: 100}], read_pct: 1, random_pct: 1}\n" * 2,
            "spec 'x', key 'name': defined twice",
        ),
        (
            "{name: x, sizes: [{size: 4K, pct: 60}, {size: 4096, pct: 40}], read_pct: 1, random_pct: 1}",
            "spec 'x', key 'sizes': size 4096 B appears more than once",
        ),
        (
            "{name: x, sizes: [{size: 4K, pct: 100, share: 3}], read_pct: 1, random_pct: 1}",
            "key 'sizes[0].share': unknown key; allowed keys: size, pct",
        ),
        (
            "{name: x, sizes: [{size: 4K, pct: 100}], read_pct: 1}",
            "key 'random_pct': required key is missing",
        ),
        (
            "{name: x, sizes: [{size: 4K, pct: 100}], read_pct: 1, random_pct: 1, queue_depth: 0}",
            "key 'queue_depth': must be >= 1, got 0",
        ),
    ],
)
def test_other_malformed_files(tmp_path, text, message):
    path = tmp_path / "specs.yaml"
    path.write_text(text)
    with pytest.raises(AccessSpecError) as info:
        load_access_specs(path)
    assert str(info.value).startswith(f"{path}: ")
    assert message in str(info.value)


def test_access_spec_error_is_a_value_error():
    assert issubclass(AccessSpecError, ValueError)


# --- the published specs ------------------------------------------------------------------------


def test_web_server_mix_matches_the_ds5020_dataset():
    rows = datasets.load("ds5020").filter(metric="size_mix_share", workload="Iometer web server")
    published = sorted((round(kib * 1024), pct) for kib, pct in rows.select("block_size_kib", "value").rows())
    assert published == [(s.size, s.pct) for s in IOMETER_WEB_SERVER.sizes]
    assert set(rows["read_pct"]) == {IOMETER_WEB_SERVER.read_pct}
    assert set(rows["random_pct"]) == {IOMETER_WEB_SERVER.random_pct}


def test_web_server_mean_size_is_the_derived_15_66_kib():
    # The dataset's derived row states sum(share x size) = 15.66 KiB exactly (the shares are whole %).
    mean = datasets.load("ds5020").filter(row_id="ds5020-web-mean-block")["value"].item()
    assert IOMETER_WEB_SERVER.mean_size == pytest.approx(mean * 1024, rel=1e-12)


def test_4k_70_30_spec_matches_the_vsan_dataset():
    rows = datasets.load("vsan").filter(workload=IOMETER_4K_70_30_RANDOM.name, metric="iops")
    assert rows.height > 0
    conditions = set(rows.select("block_size_kib", "read_pct", "random_pct", "queue_depth").rows())
    assert conditions == {(4.0, 70.0, 100.0, 1)}
    s = IOMETER_4K_70_30_RANDOM
    assert ([(x.size, x.pct) for x in s.sizes], s.read_pct, s.random_pct, s.queue_depth) == (
        [(4096, 100)],
        70,
        100,
        1,
    )


# --- sampling -----------------------------------------------------------------------------------


def test_sampled_mix_read_and_random_shares_match_the_spec():
    mix = IOMETER_WEB_SERVER.model_copy(update={"read_pct": 70.0, "random_pct": 40.0})
    span = 1 << 40
    is_read, size, address = mix.sampler(np.random.default_rng(11), span).next_block(N)
    for share in mix.sizes:
        p = share.pct / 100
        assert abs(np.count_nonzero(size == share.size) - N * p) <= four_sigma(N, p), share
    assert abs(np.count_nonzero(is_read) - 0.7 * N) <= four_sigma(N, 0.7)
    # An IO is sequential iff it starts where the previous one ended (align 512 divides every size). A
    # uniform random IO lands there by chance with probability 1/2**31 (aligned offsets in 1 TiB): the
    # expected number of such coincidences here is 4e-5, so the count below is Binomial(N - 1, 0.4).
    continues = address[1:] == address[:-1] + size[:-1]
    assert abs(np.count_nonzero(~continues) - 0.4 * (N - 1)) <= four_sigma(N - 1, 0.4)
    assert mix.mean_size == pytest.approx(sum(s.size * s.pct for s in mix.sizes) / 100)


@pytest.mark.parametrize(("read_pct", "random_pct"), [(0, 0), (100, 100)])
def test_extreme_percentages_are_exact(read_pct, random_pct):
    is_read, size, address = (
        spec(read_pct=read_pct, random_pct=random_pct)
        .sampler(np.random.default_rng(1), 1 << 30)
        .next_block(10_000)
    )
    assert is_read.all() == (read_pct == 100) and (~is_read).all() == (read_pct == 0)
    continues = address[1:] == address[:-1] + size[:-1]
    assert continues.all() == (random_pct == 0)


def reference_sequential(sizes: np.ndarray, align: int, span: int) -> np.ndarray:
    """Per-IO reference of the documented sequential rule: start at the previous end rounded up to
    ``align``, from 0 for the first IO, and back to 0 when the IO would pass the end of the span."""
    out, nxt = [], 0
    for s in sizes.tolist():
        start = nxt if nxt + s <= span else 0
        out.append(start)
        nxt = expected_next(start, s, align)
    return np.array(out, dtype=np.int64)


@pytest.mark.parametrize(
    ("sizes", "align", "span"),
    [
        ([("4K", 50), ("64K", 50)], "4K", (1 << 20) + 1000),  # many wraps, span not a multiple of align
        ([("512", 30), ("1536", 30), ("8K", 40)], "4K", 1 << 22),  # sizes that are not multiples of align
        ([("128K", 100)], "512", 1 << 17),  # span == size: every IO at 0
    ],
)
def test_sequential_runs_are_contiguous_and_wrap_at_the_span(sizes, align, span):
    s = spec(sizes=[{"size": z, "pct": p} for z, p in sizes], align=align, random_pct=0)
    sampler = s.sampler(np.random.default_rng(5), span)
    blocks = [sampler.next_block(k) for k in (1, 7, 0, 1000, 20_000, 3)]  # state carries across blocks
    size = np.concatenate([b[1] for b in blocks])
    address = np.concatenate([b[2] for b in blocks])
    np.testing.assert_array_equal(address, reference_sequential(size, s.align, span))
    assert (address % s.align == 0).all() and (address + size <= span).all()
    wraps = np.count_nonzero(address[1:] == 0)
    if span > 1 << 17:
        assert wraps >= 10  # the test does exercise the wrap
        step = address[1:] - address[:-1]
        assert (step[address[1:] != 0] == -(-size[:-1][address[1:] != 0] // s.align) * s.align).all()


class RecordingLocality:
    """Uniform offsets, remembering every offset handed out."""

    def __init__(self) -> None:
        self.given: list[np.ndarray] = []

    def offsets(self, rng, n, span, align):
        out = Uniform().offsets(rng, n, span, align)
        self.given.append(out)
        return out


def test_random_ios_come_from_the_locality_and_sequential_ones_continue_the_previous_io():
    span, align = 10 * 65536 + 512 * 3, 512
    s = spec(sizes=[{"size": "512", "pct": 50}, {"size": "64K", "pct": 50}], random_pct=30)
    locality = RecordingLocality()
    _, size, address = s.sampler(np.random.default_rng(3), span, locality).next_block(50_000)
    given = np.concatenate(locality.given)
    last_fit = (span - size) // align * align
    expected_seq = np.empty_like(address)
    expected_seq[0] = 0
    expected_seq[1:] = address[:-1] + size[:-1]
    expected_seq = np.where(expected_seq + size > span, 0, expected_seq)
    sequential = address == expected_seq
    random_ios = ~sequential
    # Every IO that does not continue the previous one is random: its address is a locality offset,
    # moved back to the last fitting address when it would pass the end of the span.
    assert random_ios.sum() <= given.size
    candidates = set(given.tolist())
    moved_back = set(np.unique(last_fit).tolist())
    assert all(a in candidates or a in moved_back for a in address[random_ios].tolist())
    assert (address % align == 0).all() and (address >= 0).all() and (address + size <= span).all()
    # The span is small (about 10 % of random 64 KiB IOs draw an offset past span - 64 KiB), so some
    # must have been moved back to the last fitting address: the test does exercise that rule.
    assert np.count_nonzero(random_ios & (size == 65536) & (address == span - 65536)) > 0


@pytest.mark.parametrize("locality", [Uniform(), Zipf(1.1, 37), HotSpot(0.2, 80)])
@pytest.mark.parametrize("span", [(1 << 20) + 777, 1 << 30])
def test_random_addresses_are_aligned_and_fit_in_the_span(locality, span):
    s = spec(sizes=[{"size": "4K", "pct": 50}, {"size": "128K", "pct": 50}], align="4K", random_pct=100)
    _, size, address = s.sampler(np.random.default_rng(9), span, locality).next_block(50_000)
    assert address.dtype == np.int64 and size.dtype == np.int64
    assert (address % 4096 == 0).all()
    assert (address >= 0).all() and (address + size <= span).all()


def test_same_seed_gives_identical_blocks_and_another_seed_does_not():
    def draw(seed):
        sampler = IOMETER_WEB_SERVER.model_copy(update={"read_pct": 60.0, "random_pct": 50.0}).sampler(
            np.random.default_rng(seed), 1 << 34, Zipf(0.9, 1000)
        )
        return [
            np.concatenate(parts) for parts in zip(*(sampler.next_block(5000) for _ in range(4)), strict=True)
        ]

    first, again, other = draw(42), draw(42), draw(43)
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[2], other[2])


def test_sampler_validates_its_arguments():
    rng = np.random.default_rng(0)
    with pytest.raises(
        ValueError,
        match=r"span must be an integer number of bytes >= the largest transfer "
        r"size \(524288 B\) of spec 'Iometer web server', got 4096",
    ):
        IOMETER_WEB_SERVER.sampler(rng, 4096)
    with pytest.raises(ValueError, match=r"rng must be a numpy.random.Generator"):
        IOMETER_WEB_SERVER.sampler(np.random.RandomState(0), 1 << 30)
    sampler = IOMETER_WEB_SERVER.sampler(rng, 1 << 30)
    with pytest.raises(ValueError, match=r"n \(number of IOs\) must be an integer >= 0, got -1"):
        sampler.next_block(-1)
    is_read, size, address = sampler.next_block(0)
    assert is_read.size == size.size == address.size == 0
