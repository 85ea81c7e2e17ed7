import math

import pytest

from storagelab.published import units


def test_time_units_convert_to_seconds():
    assert units.to_si(1.5, "ms") == pytest.approx(1.5e-3)
    assert units.to_si(600, "us") == pytest.approx(6e-4)
    assert units.convert(200, "us", "ms") == pytest.approx(0.2)
    assert units.to_si(2, "min") == 120


def test_decimal_and_binary_sizes_differ():
    assert units.to_si(1, "GB") == 1e9
    assert units.to_si(1, "GiB") == 2**30
    assert units.to_si(4, "KiB") == 4096


def test_link_rate_in_bytes_per_second():
    assert units.to_si(8, "Gb/s") == pytest.approx(1e9)
    assert units.convert(10, "Gb/s", "MB/s") == pytest.approx(1250)


def test_percent_is_a_fraction_and_opm_a_rate():
    assert units.to_si(96, "%") == pytest.approx(0.96)
    assert units.to_si(6000, "OPM") == pytest.approx(100)
    assert math.isclose(units.to_si(15000, "rpm"), 250)


def test_incompatible_and_unknown_units_are_refused():
    with pytest.raises(ValueError, match="cannot convert 'ms'"):
        units.convert(1, "ms", "MB")
    with pytest.raises(KeyError, match="unknown unit 'IOPs'"):
        units.unit("IOPs")
