"""Data reduction in the IO path: inline deduplication against an in-memory index, compression, a
content-addressed RAM read cache, and write coalescing into large sequential writes.

:class:`InlineReduction` sits in front of a back end (an array) and sees every IO's blocks through a
:class:`~storagelab.workloads.content.ContentModel`:

- a **write** is fingerprinted (``fingerprint_time`` per block on the appliance's CPU) and looked up in the
  index: a block whose content is already stored costs a reference (no back-end IO); new content is
  compressed (``compress_time_per_byte``; stored size = block / the content's ratio), kept in RAM and, if
  ``persist`` is set, sent to the back end, through a :class:`WriteCoalescer` when one is given;
- a **read** (``read_time`` of CPU per block) finds each block's content: content in RAM is served at
  ``ram_latency``; content that is not (evicted, or a base-image block never read since start, unless
  ``image_in_ram``: the image, or as much of it as fits in 90 % of the RAM, was loaded before the run;
  with ``own_in_ram`` each volume's own contents, diverged before the run, are in RAM too, as in a
  persistent in-memory desktop store) is read from the back end and kept;
- the index costs ``index_entry_bytes`` of memory per stored content, beside the compressed data.

So the IOs and bytes reaching the array, the RAM used and the capacity stored per volume are outcomes of
the content and of the RAM given, not inputs. :class:`WriteCoalescer` absorbs small writes into a segment
and writes the segment as one sequential IO when it is full or ``max_delay`` after its first write.
"""

from __future__ import annotations

from simpy.events import NORMAL, Event

from storagelab.components import cache_policies
from storagelab.kernel.component import Component, completion_at, completion_in, fire
from storagelab.kernel.composition import join_all
from storagelab.kernel.io import IORequest
from storagelab.kernel.service import CarriedTime
from storagelab.kernel.station import Station
from storagelab.workloads.content import DIVERGED_BASE, ContentModel, VolumeContents


class WriteCoalescer(Component):
    """Small writes absorbed into a ``segment_bytes`` segment, written to ``backend`` as one sequential
    write at the head of a log when the segment is full or ``max_delay`` seconds after its first write.
    A write is accepted at once (the caller keeps the data safe meanwhile, e.g. in mirrored RAM)."""

    def __init__(
        self, name: str, backend: Component, segment_bytes: int = 1 << 20, max_delay: float = 1.0
    ) -> None:
        super().__init__(name)
        if segment_bytes < 512 or not max_delay > 0:
            raise ValueError(f"write coalescer {name!r}: need segment_bytes >= 512 and max_delay > 0 s")
        self.backend, self.segment_bytes, self.max_delay = backend, int(segment_bytes), float(max_delay)

    def children(self) -> list[Component]:
        return [self.backend]

    def on_bind(self) -> None:
        self._open = 0  # bytes in the open segment
        self._generation = 0  # bumped when a segment is written, so a stale timer does nothing
        self._head = 0  # log head address
        self.reset_stats()

    def reset_stats(self) -> None:
        self.writes_in = 0
        self.bytes_in = 0
        self.segments_out = 0
        self.bytes_out = 0

    def add(self, nbytes: int) -> None:
        """Absorb ``nbytes`` of data (a compressed block)."""
        self.writes_in += 1
        self.bytes_in += nbytes
        if self._open == 0:
            gen = self._generation
            completion_in(self.env, self.max_delay, None).callbacks.append(lambda _e: self._timeout(gen))
        self._open += nbytes
        while self._open >= self.segment_bytes:
            self._open -= self.segment_bytes
            self._flush(self.segment_bytes)

    def submit(self, io: IORequest) -> Event:
        """A write absorbed (accepted now); a read goes to the back end."""
        if io.is_read:
            return self.backend.submit(io)
        self.add(io.size)
        return completion_in(self.env, 0.0, io)

    def _timeout(self, generation: int) -> None:
        if generation == self._generation and self._open > 0:
            nbytes, self._open = self._open, 0
            self._flush(nbytes)

    def _flush(self, nbytes: int) -> None:
        self._generation += 1
        io = IORequest(False, nbytes, self._head, cls="coalesced", submitted=self.env.now)
        self._head += nbytes
        self.segments_out += 1
        self.bytes_out += nbytes
        self.backend.submit(io)
        if self._open > 0:  # what spilled over starts a new segment with its own timer
            gen = self._generation
            completion_in(self.env, self.max_delay, None).callbacks.append(lambda _e: self._timeout(gen))

    def stats(self, elapsed: float) -> dict[str, float]:
        return {
            "writes_in": float(self.writes_in),
            "segments_out": float(self.segments_out),
            "writes_per_segment": self.writes_in / self.segments_out if self.segments_out else 0.0,
            "mb_out_per_s": self.bytes_out / elapsed / 1e6 if elapsed > 0 else 0.0,
        }


def cpu_station(name: str, cores: int) -> Station:
    """The appliance's ``cores`` processors: a FIFO station whose jobs carry their CPU time (s) in ``tag``."""
    return Station(name, CarriedTime(), servers=cores)


class InlineReduction(Component):
    """Inline deduplication and compression with a content-addressed RAM cache, in front of ``backend``
    (see the module docs). ``cpu``: the appliance's processors, a station from :func:`cpu_station`
    (each job's service time is the CPU time it carries); ``None``: CPU time is free.
    ``ram_bytes``: RAM for compressed contents (the index's memory is counted apart); ``persist``: new
    contents are written to the back end (through ``coalescer`` when given)."""

    def __init__(
        self,
        name: str,
        backend: Component,
        content: ContentModel,
        *,
        ram_bytes: float,
        ram_latency: float = 50e-6,
        fingerprint_time: float = 2e-6,
        compress_time_per_byte: float = 0.5e-9,
        read_time: float = 0.0,
        index_entry_bytes: int = 64,
        coalescer: WriteCoalescer | None = None,
        persist: bool = True,
        cpu: Component | None = None,
        image_in_ram: bool = False,
        own_in_ram: bool = False,
    ) -> None:
        super().__init__(name)
        if not ram_bytes > 0 or min(ram_latency, fingerprint_time, compress_time_per_byte, read_time) < 0:
            raise ValueError(
                f"inline reduction {name!r}: need ram_bytes > 0 and non-negative latency and CPU times"
            )
        if coalescer is not None and coalescer.backend is not backend:
            raise ValueError(f"inline reduction {name!r}: the coalescer must write to the same back end")
        self.backend, self.content_model, self.coalescer, self.cpu = backend, content, coalescer, cpu
        self.ram_bytes, self.ram_latency = float(ram_bytes), float(ram_latency)
        self.fingerprint_time, self.compress_time_per_byte = (
            float(fingerprint_time),
            float(compress_time_per_byte),
        )
        self.index_entry_bytes, self.persist = int(index_entry_bytes), persist
        self.read_time, self.image_in_ram = float(read_time), image_in_ram
        self.own_in_ram = own_in_ram
        self.block = content.block_bytes

    def children(self) -> list[Component]:
        out: list[Component] = [self.backend]
        if self.coalescer is not None:
            out.append(self.coalescer)
        if self.cpu is not None:
            out.append(self.cpu)
        return out

    def on_bind(self) -> None:
        self._cpu_timed = self.cpu.submit_timed if getattr(self.cpu, "timed", False) else None
        # the processors' own method for a job of so many seconds (no IO made to carry them), where
        # their service is the time each job carries, as the station cpu_station() builds
        self._cpu_work = (
            self.cpu.submit_timed_work
            if self._cpu_timed is not None and isinstance(self.cpu.service_source, CarriedTime)
            else None
        )
        self.contents: VolumeContents = self.content_model.bind(self.rng)
        self.refs: dict[int, int] = {}  # stored content -> references
        self.stored: dict[int, float] = {}  # stored content -> compressed bytes
        self.stored_bytes = 0.0
        # RAM: an LRU over contents, sized in (average) compressed blocks
        per_block = self.block / self.content_model.compression_mean
        capacity = max(1, int(self.ram_bytes // per_block))
        self._pinned = 0  # base contents below this id are resident (the image loaded before the run)
        if self.image_in_ram:  # as much of the image as fits in 90 % of the RAM; the rest is read on demand
            self._pinned = min(self.content_model.image_blocks, int(0.9 * capacity))
            self.stored_bytes = self.content_model.image_blocks * per_block  # stored once, shared by clones
        self.pinned_bytes = self._pinned * per_block
        self.ram = cache_policies.LRU(max(1, capacity - self._pinned))
        self.reset_stats()

    def reset_stats(self) -> None:
        self.reads = self.writes = 0
        self.read_blocks = self.read_misses = 0
        self.write_blocks = self.dedupe_hits = self.unique_blocks = 0
        self.backend_reads = self.backend_writes = 0
        self.bytes_to_backend = 0.0

    # -- the IO path -------------------------------------------------------------------------------------
    def _blocks(self, io: IORequest) -> range:
        b = self.block
        return range(io.address // b, (io.address + io.size - 1) // b + 1)

    def _cpu(self, seconds: float, io: IORequest) -> Event | float | None:
        """The CPU work of ``io`` (``seconds``) submitted to the processors: the event of its completion,
        or, when the processors say at arrival when it completes (a FIFO station on its fast path), that
        time (s, as the station's event would carry it), so that a caller that joins it with the RAM's
        time schedules one event, at the later of the two, instead of two and a join; None without a
        CPU or work."""
        if self.cpu is None or seconds <= 0:
            return None
        job = io.child()
        job.tag = seconds
        if self._cpu_timed is not None:
            now = self.env._now
            return now + (self._cpu_timed(job) - now)  # the time the station's own event would fire at
        return self.cpu.submit(job)

    def _with_cpu(self, ram: float, cpu: Event | float | None, io: IORequest) -> Event:
        """The IO done when the RAM's ``ram`` (s from now) and the CPU work ``cpu`` (from :meth:`_cpu`)
        both are: the same completion, at the same time, as a join of their two events."""
        env = self.env
        if cpu is None:
            return completion_in(env, ram, io)
        if isinstance(cpu, float):
            return completion_at(env, max(env._now + ram, cpu), io)
        return join_all(env, [completion_in(env, ram, io), cpu], io)

    def submit(self, io: IORequest) -> Event:
        return self._read(io) if io.is_read else self._write(io)

    def submit_known(self, io: IORequest) -> Event | float:
        """:meth:`submit`, except that a read whose every block is in RAM, on processors that say at
        arrival when its work completes, returns that completion time (s) and schedules nothing: the
        time its event would fire at. An open-loop source records such a read at once
        (:class:`~storagelab.kernel.sources.OpenSource`), which saves a boot storm an event per read."""
        return self._read(io, True) if io.is_read else self._write(io)

    def _read(self, io: IORequest, known: bool = False) -> Event | float:
        self.reads += 1
        missing = []
        b = self.block
        first, end = io.address // b, (io.address + io.size - 1) // b + 1  # self._blocks(io), inline
        self.read_blocks += end - first
        read, pinned, volume = self.contents.read, self._pinned, io.volume
        own = DIVERGED_BASE if self.own_in_ram else None  # a volume's own contents are resident from there on
        for block in range(first, end):
            c = read(volume, block)
            if c >= pinned and (own is None or c < own) and not self.ram.access(c):
                missing.append(c)
        cpu_s = self.read_time * (end - first)
        if not missing and self._cpu_timed is not None and cpu_s > 0:
            # every block in RAM and the processors timed: _with_cpu(ram_latency, _cpu(cpu_s, io), io),
            # inline (the IO path of a read hit, most of a boot storm's IOs)
            env = self.env
            now = env._now
            if self._cpu_work is not None:
                cpu = now + (self._cpu_work(cpu_s) - now)
            else:
                job = io.child()
                job.tag = cpu_s
                cpu = now + (self._cpu_timed(job) - now)
            ram = now + self.ram_latency
            if known:
                return ram if ram > cpu else cpu
            ev = Event.__new__(Event)  # completion_at(env, max(ram, cpu), io), inline
            ev.env, ev.callbacks, ev._value, ev._ok = env, [], io, True
            env._queue.push(ram if ram > cpu else cpu, NORMAL, ev)
            return ev
        cpu = self._cpu(cpu_s, io)
        if not missing:
            return self._with_cpu(self.ram_latency, cpu, io)
        self.read_misses += len(missing)
        self.backend_reads += 1
        done = Event(self.env)

        def filled(_e: Event) -> None:
            for c in missing:
                self.ram.insert(c)
            fire(done, io)

        self.backend.submit(io).callbacks.append(filled)  # the stored blocks, one back-end read
        return done

    def _write(self, io: IORequest) -> Event:
        self.writes += 1
        new_bytes = 0.0
        cpu_s = 0.0
        for b in self._blocks(io):
            self.write_blocks += 1
            c = self.contents.write(io.volume, b)
            cpu_s += self.fingerprint_time
            if c in self.refs:
                self.refs[c] += 1
                self.dedupe_hits += 1
                self.ram.access(c)
                continue
            size = self.block / self.content_model.compression_ratio(c)
            cpu_s += self.compress_time_per_byte * self.block
            self.refs[c] = 1
            self.stored[c] = size
            self.stored_bytes += size
            self.unique_blocks += 1
            self.ram.insert(c)
            new_bytes += size
        done = self._with_cpu(self.ram_latency, self._cpu(cpu_s, io), io)
        if new_bytes > 0 and self.persist:
            self.bytes_to_backend += new_bytes
            if self.coalescer is not None:
                self.coalescer.add(round(new_bytes))
            else:
                self.backend_writes += 1
                out = IORequest(False, max(1, round(new_bytes)), io.address, io.volume, io.cls, io.submitted)
                self.backend.submit(out)  # written behind the acknowledgement (the data are safe in RAM)
        return done

    # -- what it achieved -------------------------------------------------------------------------------
    def memory_bytes(self) -> float:
        """RAM in use: the compressed contents held (at most ``ram_bytes``) and the index."""
        per_block = self.block / self.content_model.compression_mean
        cached = self.pinned_bytes + len(self.ram) * per_block
        return cached + (len(self.refs) + self._pinned) * self.index_entry_bytes

    def stats(self, elapsed: float) -> dict[str, float]:
        blocks_in = self.write_blocks
        return {
            "reads": float(self.reads),
            "writes": float(self.writes),
            "read_hit_ratio": 1 - self.read_misses / self.read_blocks if self.read_blocks else 0.0,
            "dedupe_ratio": blocks_in / self.unique_blocks if self.unique_blocks else 0.0,
            "stored_gb": self.stored_bytes / 1e9,
            "memory_gb": self.memory_bytes() / 1e9,
            "backend_reads": float(self.backend_reads),
            "backend_writes": float(self.backend_writes),
            "mb_to_backend_per_s": self.bytes_to_backend / elapsed / 1e6 if elapsed > 0 else 0.0,
        }
