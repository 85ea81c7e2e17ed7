"""Flash SSDs: SATA/SAS (:class:`SSD`) and NVMe (:class:`NVMe`), the same service model."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import ClassVar

import numpy as np

from storagelab.devices.model import DATASHEET_BLOCK, CapacityExceeded, _check_io, _lookup, _param, _Variates
from storagelab.provenance import Param


class SSD:
    """A flash SSD: ``base latency + size / (bandwidth / parallelism)`` per IO, read/write asymmetric, on
    each of ``parallelism`` internal units (channels/dies the controller keeps busy at once; the station
    gives the device that many servers). The datasheet bandwidth is the whole device's: the units share
    it, so many large IOs in flight reach the datasheet's sequential rate, not ``parallelism`` times it. With ``jitter_scv > 0`` each time is multiplied by a lognormal
    factor of mean 1 and that squared coefficient of variation, so the mean is unchanged.
    The service time does not depend on the address or on state.

    **Buffered writes.** An enterprise SSD acknowledges a write from its power-protected DRAM buffer
    and programs the flash in the background. With ``host_write_latency`` (the datasheet's write
    latency) and ``write_buffer`` (bytes), :func:`storagelab.components.flash.flash_drive` puts such a
    buffer in front of the device's station: a write completes after ``host_write_latency`` (+ the
    transfer of any bytes beyond a 4 KiB block) while the buffer has room, and the units spend the
    write service time above programming it, competing with reads. Internal parallelism then sets the
    sustained write rate (the datasheet's write IOPS), not the write latency.
    """

    state_dependent: ClassVar[bool] = False
    interface: ClassVar[str] = "SATA/SAS"
    PRESETS: ClassVar[dict[str, Callable[[], SSD]]] = {}

    def __init__(
        self,
        name: str,
        *,
        read_latency: Param,
        write_latency: Param,
        read_bandwidth: Param,
        write_bandwidth: Param,
        parallelism: Param,
        jitter_scv: float = 0.0,
        capacity: Param | None = None,
        host_write_latency: Param | None = None,
        write_buffer: Param | None = None,
    ) -> None:
        self.name = str(name)
        if (host_write_latency is None) != (write_buffer is None):
            raise ValueError(
                f"{name}: give host_write_latency and write_buffer together (buffered writes) or neither"
            )
        self.host_write_latency = (
            None
            if host_write_latency is None
            else _param("host_write_latency", host_write_latency, "time", 1e-9, 1.0)
        )
        self.write_buffer = (
            None if write_buffer is None else int(_param("write_buffer", write_buffer, "size", 4096))
        )
        self.read_latency = _param("read_latency", read_latency, "time", 0.0, 1.0)
        self.write_latency = _param("write_latency", write_latency, "time", 0.0, 1.0)
        self.read_bandwidth = _param("read_bandwidth", read_bandwidth, "throughput", 1.0)
        self.write_bandwidth = _param("write_bandwidth", write_bandwidth, "throughput", 1.0)
        par = _param("parallelism", parallelism, "count", 1.0, 4096.0)
        if par != int(par):
            raise ValueError(f"parallelism must be a whole number of units, got {parallelism.value}")
        self.parallelism = int(par)
        # each unit's share of the device's bandwidth (B/s)
        self._read_unit_bw = self.read_bandwidth / self.parallelism
        self._write_unit_bw = self.write_bandwidth / self.parallelism
        if not isinstance(jitter_scv, int | float) or not 0 <= jitter_scv <= 100:
            raise ValueError(
                f"jitter_scv must be a number in [0, 100] (squared coefficient of variation), got {jitter_scv!r}"
            )
        self.jitter_scv = float(jitter_scv)
        self.capacity = None if capacity is None else int(_param("capacity", capacity, "size", 1.0))
        self.params: dict[str, Param] = {
            "read_latency": read_latency, "write_latency": write_latency, "read_bandwidth": read_bandwidth,
            "write_bandwidth": write_bandwidth, "parallelism": parallelism,
        }  # fmt: skip
        if capacity is not None:
            self.params["capacity"] = capacity
        if host_write_latency is not None and write_buffer is not None:  # given together (checked above)
            self.params |= {"host_write_latency": host_write_latency, "write_buffer": write_buffer}
        sigma = math.sqrt(math.log1p(self.jitter_scv))
        self._sigma = sigma
        self._factor = _Variates(lambda g, n: g.lognormal(-sigma * sigma / 2, sigma, n))  # mean 1

    def service_time(self, is_read: bool, size: int, address: int, rng: np.random.Generator) -> float:
        """Seconds one internal unit spends on this IO."""
        if size <= 0 or address < 0 or (self.capacity is not None and address + size > self.capacity):
            _check_io(self.name, size, address)
            raise CapacityExceeded(
                f"{self.name}: IO [{address}, {address + size}) runs past the capacity {self.capacity} bytes"
            )
        if is_read:
            t = self.read_latency + size / self._read_unit_bw
        else:
            t = self.write_latency + size / self._write_unit_bw
        if self._sigma:
            t *= self._factor(rng)
        return t

    def mean_service_time(self, is_read: bool, size: int) -> float:
        """Analytic mean (s): base latency + size / the unit's share of the bandwidth (jitter has mean 1)."""
        _check_io(self.name, size, 0)
        if is_read:
            return self.read_latency + size / self._read_unit_bw
        return self.write_latency + size / self._write_unit_bw

    def host_write_time(self, size: int = DATASHEET_BLOCK) -> float:
        """Mean time (s) a host waits for a ``size``-byte write on an idle device: the buffered write
        latency (plus the transfer beyond a 4 KiB block) if writes are buffered, else the write service."""
        if self.host_write_latency is None:
            return self.mean_service_time(False, size)
        _check_io(self.name, size, 0)
        return self.host_write_latency + max(size - DATASHEET_BLOCK, 0) / self.write_bandwidth

    def max_iops(self, is_read: bool, size: int = DATASHEET_BLOCK) -> float:
        """Saturation throughput (IO/s) for IOs of ``size`` bytes: parallelism / mean service time."""
        return self.parallelism / self.mean_service_time(is_read, size)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.name!r}, parallelism {self.parallelism}, 4 KiB read "
            f"{self.mean_service_time(True, DATASHEET_BLOCK) * 1e6:.1f} us / write "
            f"{self.mean_service_time(False, DATASHEET_BLOCK) * 1e6:.1f} us)"
        )

    @classmethod
    def preset(cls, name: str) -> SSD:
        """A fresh device of a named class: one of :attr:`PRESETS`."""
        return _lookup(cls.PRESETS, name, cls.__name__)()

    @classmethod
    def from_datasheet(
        cls,
        name: str,
        *,
        read_iops: Param,
        write_iops: Param,
        read_latency: Param,
        read_bandwidth: Param,
        write_bandwidth: Param,
        parallelism: Param | None = None,
        block: int = DATASHEET_BLOCK,
        capacity: Param | None = None,
        jitter_scv: float = 0.0,
        write_latency: Param | None = None,
        write_buffer: Param | None = None,
    ) -> SSD:
        """A device whose ``parallelism / mean service time`` reproduces the datasheet's random IOPS.

        Unless given, ``parallelism`` is ``round(read_iops * read_latency)`` (the units a closed loop
        must keep busy to reach the rated IOPS at the rated latency), at least 1. The base latencies
        are then fitted: ``base = parallelism / iops - block x parallelism / bandwidth`` (each unit has its
        share of the bandwidth), so the mean service time of
        a ``block``-byte IO is exactly ``parallelism / iops``. The modelled QD1 read latency differs from
        the datasheet's by the rounding of parallelism, at most ``0.5 / (read_iops * read_latency)``
        relative. The units' write service time keeps the write IOPS; the datasheet ``write_latency``
        (a buffered write) is what the host sees when ``write_buffer`` is given too (see the class
        docstring).
        """
        r_iops = _param("read_iops", read_iops, "io_rate", 1.0)
        w_iops = _param("write_iops", write_iops, "io_rate", 1.0)
        r_lat = _param("read_latency", read_latency, "time", 1e-9, 1.0)
        r_bw = _param("read_bandwidth", read_bandwidth, "throughput", 1.0)
        w_bw = _param("write_bandwidth", write_bandwidth, "throughput", 1.0)
        if not isinstance(block, int) or block <= 0:
            raise ValueError(f"block must be a positive number of bytes, got {block!r}")
        if parallelism is None:
            rounded = max(1, round(r_iops * r_lat))
            parallelism = Param(
                rounded, "count", "datasheet",
                f"arithmetic on the datasheet: round(read IOPS {read_iops.value:g} x read latency {read_latency.value:g} {read_latency.unit}) "
                f"= round({r_iops * r_lat:.3f})",
            )  # fmt: skip
        units = _param("parallelism", parallelism, "count", 1.0, 4096.0)
        base = {}
        for op, iops, p_iops, bw, p_bw in (("read", r_iops, read_iops, r_bw, read_bandwidth),
                                           ("write", w_iops, write_iops, w_bw, write_bandwidth)):  # fmt: skip
            s = units / iops - block * units / bw
            if s < 0:
                raise ValueError(
                    f"{name}: {op} IOPS {iops:g} with parallelism {units:g} leaves no time for a {block}-byte "
                    f"transfer at {bw:g} B/s; raise parallelism or check the datasheet numbers"
                )
            base[op] = Param(
                s * 1e6, "us", "datasheet",
                f"arithmetic on the datasheet: parallelism {units:g} / {op} IOPS {p_iops.value:g} - {block} B x {units:g} / {op} "
                f"bandwidth {p_bw.value:g} {p_bw.unit}, so that parallelism / mean {block}-byte service time = datasheet IOPS",
            )  # fmt: skip
        dev = cls(
            name,
            read_latency=base["read"],
            write_latency=base["write"],
            read_bandwidth=read_bandwidth,
            write_bandwidth=write_bandwidth,
            parallelism=parallelism,
            jitter_scv=jitter_scv,
            capacity=capacity,
            host_write_latency=write_latency,
            write_buffer=write_buffer,
        )
        dev.params.update(
            {"read_iops": read_iops, "write_iops": write_iops, "datasheet_read_latency": read_latency}
        )
        return dev


class NVMe(SSD):
    """An NVMe (PCIe) flash SSD: the same service model as :class:`SSD`, its own presets."""

    interface: ClassVar[str] = "NVMe"
    PRESETS: ClassVar[dict[str, Callable[[], SSD]]] = {}
