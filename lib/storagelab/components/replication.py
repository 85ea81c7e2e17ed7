"""Replication between two sites over a WAN: synchronous mirrors (VPLEX Metro, DRBD protocol C),
asynchronous replicas with a replication log (DRBD protocols A and B) or with delta sets closed every
cycle (VPLEX Geo), and the failures that test them.

A replicated volume has two :class:`Site` s joined by a :class:`WanLink`. It keeps, per site, the
version of every region (``region_bytes`` of the address space) that site holds, and the latest version
a host was told is written. So at any instant it knows which acknowledged writes a site does not yet
hold: the **data at risk** (bytes) and the **lag** (seconds since the oldest such write was
acknowledged: the recovery point if the other site were lost now). A sampler records both every
``sample_interval`` seconds (:meth:`ReplicatedVolume.timeline`, :meth:`ReplicatedVolume.rpo`).

Failures are events of the run (:class:`LinkLoss`, :class:`LinkRestore`, :class:`LinkChange`,
:class:`SiteLoss`), given when the volume is built:

- **link loss**: writes that need the other site wait; after ``detection_time`` the winner continues
  alone (the ``preferred`` site, or with a ``witness`` whichever site is still up), tracking the regions
  it writes as dirty; the other site suspends its IO.
- **link restore**: the dirty regions are copied to the other site over the link (``resync_window``
  copies in flight), new writes replicate again, and the suspended site resumes when the copy is done.
- **site loss**: the site's IOs never complete; what the survivor does not hold of the acknowledged
  writes is lost (bytes and seconds in :meth:`ReplicatedVolume.failures`); the survivor continues after
  ``detection_time`` if it is the preferred site or a witness says the other is gone, else it suspends.

Sources: DRBD's protocols A/B/C (when a write is acknowledged: local disk and the send buffer, local
disk and the peer's memory, both disks), VPLEX Metro's synchronous write-through and VPLEX Geo's
asynchronous write-back with delta sets (EMC, *VPLEX with XtremIO 2.4*: "VPLEX Geo performance will be
limited to the available drain-rate, which is a function of the available WAN bandwidth and XtremIO
performance at each cluster").
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from simpy.events import Event

from storagelab.kernel.component import Component, completion_in, fire
from storagelab.kernel.io import IORequest
from storagelab.kernel.stages import Link

# -- failures and link changes, as events of a run ---------------------------------------------------


@dataclass(frozen=True)
class LinkLoss:
    """The inter-site link goes down at ``at`` seconds of simulated time."""

    at: float


@dataclass(frozen=True)
class LinkRestore:
    """The inter-site link comes back at ``at`` seconds."""

    at: float


@dataclass(frozen=True)
class LinkChange:
    """The link's ``bandwidth`` (bytes/s) and/or round-trip time ``rtt`` (s) change at ``at`` seconds
    (degradation, rerouting); ``None`` keeps the current value."""

    at: float
    bandwidth: float | None = None
    rtt: float | None = None


@dataclass(frozen=True)
class SiteLoss:
    """Site ``site`` (0 or 1) is lost at ``at`` seconds: its array and hosts stop."""

    at: float
    site: int


Failure = LinkLoss | LinkRestore | LinkChange | SiteLoss


class WanLink(Link):
    """An inter-site link: full duplex, each direction a FIFO at ``bandwidth`` bytes/s, and a round-trip
    time ``rtt`` (s; each crossing pays half). Direction 0 carries site 0 to site 1, direction 1 the
    reverse. Its bandwidth and RTT may change during a run (:class:`LinkChange`)."""

    def __init__(self, name: str, bandwidth: float, rtt: float, per_io_overhead: float = 0.0) -> None:
        if not rtt >= 0:
            raise ValueError(f"WAN link {name!r}: rtt must be >= 0 s, got {rtt}")
        super().__init__(name, bandwidth, propagation=rtt / 2, per_io_overhead=per_io_overhead)
        self.rtt = float(rtt)
        self._initial = (self.bandwidth, self.rtt)

    def on_bind(self) -> None:
        self.bandwidth, self.rtt = self._initial
        self.propagation = self.rtt / 2
        self.up = True
        self.epoch = 0  # bumped when the link goes down: crossings of an older epoch are lost
        super().on_bind()

    def reset_stats(self) -> None:
        super().reset_stats()
        self.dir_bytes = [0, 0]

    def send(self, from_site: int, nbytes: int, io: IORequest) -> Event:
        """``nbytes`` (payload and header) from site ``from_site`` to the other: serialized on that
        direction, then half the RTT. An acknowledgement (``nbytes == 0``) is a frame too small to wait
        behind whole IOs (frames of all messages interleave on the wire): it pays half the RTT only."""
        if nbytes == 0:
            return completion_in(self.env, self.propagation, io)
        self.dir_bytes[from_site] += nbytes
        self.bytes += nbytes
        self.completed += from_site == 0
        return self._cross(from_site, nbytes / self.bandwidth + self.per_io_overhead, io)

    def change(self, bandwidth: float | None = None, rtt: float | None = None) -> None:
        """Set a new bandwidth (bytes/s) and/or RTT (s) from now on."""
        if bandwidth is not None:
            if not bandwidth > 0:
                raise ValueError(f"WAN link {self.name!r}: bandwidth must be > 0 B/s, got {bandwidth}")
            self.bandwidth = float(bandwidth)
        if rtt is not None:
            if not rtt >= 0:
                raise ValueError(f"WAN link {self.name!r}: rtt must be >= 0 s, got {rtt}")
            self.rtt, self.propagation = float(rtt), float(rtt) / 2

    def stats(self, elapsed: float) -> dict[str, float]:
        """Utilisation of each direction and MB/s each way."""
        out = super().stats(elapsed)
        if elapsed <= 0:
            return out
        return {
            "utilisation": out["utilisation"],
            "utilisation_0_to_1": out["utilisation_request"],
            "utilisation_1_to_0": out["utilisation_response"],
            "mb_per_s_0_to_1": self.dir_bytes[0] / elapsed / 1e6,
            "mb_per_s_1_to_0": self.dir_bytes[1] / elapsed / 1e6,
        }


@dataclass
class Site:
    """One site of a replicated volume. ``volume`` serves the IOs of the site's hosts (reads, and the
    local copy of writes); ``apply`` takes the writes replicated from the other site (default:
    ``volume``; e.g. the back end without the host ports); ``cache``, when given, is where a write-back
    appliance acknowledges a write locally (the write then goes to ``volume`` in the background)."""

    name: str
    volume: Component
    apply: Component | None = None
    cache: Component | None = None

    @property
    def applier(self) -> Component:
        return self.apply if self.apply is not None else self.volume

    def components(self) -> list[Component]:
        return [c for c in (self.volume, self.apply, self.cache) if c is not None]


class _SiteFrontEnd(Component):
    """What the hosts at one site submit to."""

    def __init__(self, owner: ReplicatedVolume, site: int) -> None:
        super().__init__(f"{owner.name} @ {owner.sites[site].name}")
        self.owner, self.site = owner, site

    def children(self) -> list[Component]:
        return [self.owner]

    def submit(self, io: IORequest) -> Event:
        return self.owner.submit_at(self.site, io)


class ReplicatedVolume(Component):
    """The state every replication mode shares: two sites, the link, region versions, failures, the
    lag sampler. Subclasses say how a write is replicated (:meth:`_write`) and what they buffer. ``mode``
    is ``replicating``, ``detecting`` (the peer is gone, not yet decided), ``isolated`` (one site continues
    alone) or ``resyncing`` (dirty regions are being copied back)."""

    def __init__(
        self,
        name: str,
        sites: Sequence[Site],
        wan: WanLink,
        *,
        failures: Sequence[Failure] = (),
        preferred: int = 0,
        witness: bool = False,
        detection_time: float = 5.0,
        region_bytes: int = 4096,
        resync_window: int = 256,
        sample_interval: float = 0.01,
    ) -> None:
        super().__init__(name)
        if len(sites) != 2:
            raise ValueError(f"replicated volume {name!r}: needs exactly 2 sites, got {len(sites)}")
        if preferred not in (0, 1):
            raise ValueError(f"replicated volume {name!r}: preferred must be site 0 or 1, got {preferred!r}")
        if not detection_time >= 0 or region_bytes < 1 or resync_window < 1 or not sample_interval > 0:
            raise ValueError(
                f"replicated volume {name!r}: need detection_time >= 0 s, region_bytes >= 1, "
                f"resync_window >= 1 and sample_interval > 0 s"
            )
        for f in failures:
            if not isinstance(f, LinkLoss | LinkRestore | LinkChange | SiteLoss):
                raise TypeError(f"replicated volume {name!r}: unknown failure {f!r}")
            if not f.at >= 0:
                raise ValueError(f"replicated volume {name!r}: {f!r} happens at a negative time")
            if isinstance(f, SiteLoss) and f.site not in (0, 1):
                raise ValueError(f"replicated volume {name!r}: {f!r} names no site (0 or 1)")
        self.sites = list(sites)
        self.wan = wan
        self.failure_schedule = sorted(failures, key=lambda f: f.at)
        self.preferred, self.witness = preferred, witness
        self.detection_time, self.region_bytes = float(detection_time), int(region_bytes)
        self.resync_window, self.sample_interval = resync_window, float(sample_interval)
        self.front_ends = [_SiteFrontEnd(self, 0), _SiteFrontEnd(self, 1)]

    def at(self, site: int) -> Component:
        """The component the hosts at ``site`` (0 or 1) submit to."""
        return self.front_ends[site]

    def children(self) -> list[Component]:
        return [c for s in self.sites for c in s.components()] + [self.wan]

    # -- per-run state -------------------------------------------------------------------------------
    def on_bind(self) -> None:
        self.mode = "replicating"
        self.site_up = [True, True]
        self.suspended = [False, False]
        self.winner: int | None = None
        self._held: list[deque] = [deque(), deque()]  # IOs (io, event) waiting while a site is suspended
        self._seq = 0
        self._acked: dict[int, int] = {}  # region -> latest acknowledged version
        self._ack_time: dict[int, float] = {}  # version -> when it was acknowledged (while unreplicated)
        self._version: list[dict[int, int]] = [{}, {}]  # per site: region -> version it holds
        self._dirty: dict[int, float] = {}  # isolated: region -> first time written without the peer
        self._resync_started = 0.0
        self._resync_queue: deque = deque()
        self._resync_busy = 0
        self._resync_epoch = -1
        self.failure_log: list[dict] = []
        self.reset_stats()
        self.env.process(self._sampler())
        if self.failure_schedule:
            self.env.process(self._failures())

    def reset_stats(self) -> None:
        self.writes_acked = 0
        self.reads = 0
        self.samples: list[tuple[float, float, float, str]] = []

    # -- the interface -------------------------------------------------------------------------------
    def submit(self, io: IORequest) -> Event:
        """An IO from a host at site 0 (use :meth:`at` for site 1)."""
        return self.submit_at(0, io)

    def submit_at(self, site: int, io: IORequest) -> Event:
        done = Event(self.env)
        if not self.site_up[site]:
            return done  # a lost site completes nothing
        if self.suspended[site]:
            self._held[site].append((io, done))
            return done
        self._serve(site, io, done)
        return done

    def _serve(self, site: int, io: IORequest, done: Event) -> None:
        if io.is_read:
            self.reads += 1
            self.sites[site].volume.submit(io).callbacks.append(lambda _e: fire(done, io))
        else:
            self._write(site, io, done)

    def _write(self, site: int, io: IORequest, done: Event) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- versions: what each site holds of what was acknowledged -------------------------------------
    def _regions(self, io: IORequest) -> range:
        r = self.region_bytes
        return range(io.address // r, (io.address + io.size - 1) // r + 1)

    def _new_version(self) -> int:
        self._seq += 1
        return self._seq

    def _hold(self, site: int, regions: range, version: int) -> None:
        """Site ``site`` now holds ``version`` of ``regions`` (a write landed there)."""
        held = self._version[site]
        for r in regions:
            if held.get(r, 0) < version:
                held[r] = version

    def _acknowledge(
        self, regions: range, version: int, done: Event, io: IORequest, *, dirty: bool, unreplicated: bool
    ) -> None:
        """Tell the host the write is done. ``dirty``: the other site will not get it by replication
        (it is copied by the next resync); ``unreplicated``: it is acknowledged before the other site
        has it (its time is kept for the seconds lost at a site loss)."""
        now = self.env._now
        acked = self._acked
        for r in regions:
            if acked.get(r, 0) < version:
                acked[r] = version
            if dirty and r not in self._dirty:
                self._dirty[r] = now
                if self.mode == "resyncing":
                    self._resync_queue.append(r)
        if dirty and self.mode == "resyncing":
            self._copy_more()
        if unreplicated or dirty:
            self._ack_time[version] = now
        self.writes_acked += 1
        fire(done, io)

    def missing_at(self, site: int) -> dict[int, int]:
        """Regions whose acknowledged version site ``site`` does not hold: region -> that version."""
        held = self._version[site]
        return {r: v for r, v in self._acked.items() if held.get(r, 0) < v}

    def _at_risk(self) -> tuple[float, float]:
        """(lag in s, bytes) of acknowledged data the site that would survive does not hold; overridden
        by the modes that keep a buffer, for speed."""
        now = self.env._now
        if self._dirty:
            return now - next(iter(self._dirty.values())), len(self._dirty) * float(self.region_bytes)
        return 0.0, 0.0

    # -- the sampler and the failure events ----------------------------------------------------------
    def _sampler(self):
        while True:
            lag, nbytes = self._at_risk()
            self.samples.append((self.env._now, lag, nbytes, self.mode))
            yield self.env.timeout(self.sample_interval)

    def _failures(self):
        for f in self.failure_schedule:
            if f.at > self.env._now:
                yield self.env.timeout(f.at - self.env._now)
            if isinstance(f, LinkChange):
                self.wan.change(f.bandwidth, f.rtt)
                self._record("link change", None, bandwidth=f.bandwidth, rtt=f.rtt)
            elif isinstance(f, LinkLoss):
                self._link_down()
            elif isinstance(f, LinkRestore):
                self._link_up()
            else:
                self._site_down(f.site)

    def _record(self, event: str, site: int | None, **extra: object) -> None:
        lag, nbytes = self._at_risk()
        self.failure_log.append(
            {"time_s": self.env._now, "event": event, "site": site, "mode": self.mode, "lag_s": lag,
             "bytes_at_risk": nbytes} | extra
        )  # fmt: skip

    def _link_down(self) -> None:
        if not self.wan.up:
            return
        self.wan.up = False
        self.wan.epoch += 1
        self._record("link loss", None)
        if self.mode in ("replicating", "resyncing"):
            self.mode = "detecting"
            self._on_link_lost()
            self.env.process(self._detect())

    def _detect(self):
        yield self.env.timeout(self.detection_time)
        if self.mode != "detecting":
            return
        up = [s for s in (0, 1) if self.site_up[s]]
        if len(up) == 2 or self.witness or up == [self.preferred]:
            winner = self.preferred if len(up) == 2 else up[0]
        else:
            winner = None  # the preferred site is gone and no witness: the survivor suspends
        self.winner = winner
        self.mode = "isolated"
        for s in (0, 1):
            if s != winner:
                self.suspended[s] = True
        self._record("isolated", winner, winner=winner)
        self._on_isolated(winner)

    def _link_up(self) -> None:
        if self.wan.up:
            return
        self.wan.up = True
        self._record("link restore", None)
        if self.mode == "detecting" and not self._dirty:  # back before anyone decided: resend what waits
            self.mode = "replicating"
            self._on_link_back()
            return
        if self.mode == "detecting":  # an asynchronous replica's buffer became dirty regions
            self.winner = self.preferred
            self.suspended[1 - self.preferred] = True
            self.mode = "isolated"
        if self.mode == "isolated" and self.winner is not None and all(self.site_up):
            self.mode = "resyncing"
            self._resync_started = self.env._now
            self._resync()

    def _site_down(self, site: int) -> None:
        if not self.site_up[site]:
            return
        survivor = 1 - site
        missing = self.missing_at(survivor)
        lost_since = min(
            (self._ack_time.get(v, self.env._now) for v in missing.values()), default=self.env._now
        )
        self._record(
            "site loss", site, bytes_unapplied=self._unapplied_bytes(), bytes_lost=len(missing) * float(self.region_bytes), writes_lost=len(set(missing.values())),
            seconds_lost=self.env._now - lost_since,
        )  # fmt: skip
        self.site_up[site] = False
        self._held[site].clear()
        if self.mode in ("replicating", "resyncing"):
            self.mode = "detecting"
            self._on_link_lost()
            self.env.process(self._detect())

    def _unapplied_bytes(self) -> float:
        """Bytes of the distinct regions acknowledged and still buffered or dirty (the data a loss of the
        writing site would take with it)."""
        return len(self._unapplied_regions()) * float(self.region_bytes)

    def _unapplied_regions(self) -> set[int]:
        return set(self._dirty)

    # -- resynchronisation ---------------------------------------------------------------------------
    def _resync(self) -> None:
        """Copy every dirty region from the winner to the other site, ``resync_window`` at a time; a
        region written (alone) during the copy joins the queue."""
        self._resync_queue = deque(self._dirty)
        self._resync_busy = 0
        self._resync_epoch = self.wan.epoch
        self._copy_more()

    def _copy_more(self) -> None:
        w, epoch = self.winner, self._resync_epoch
        if w is None or self.wan.epoch != epoch or self.mode != "resyncing":
            return
        applier = self.sites[1 - w].applier
        queue = self._resync_queue
        while queue and self._resync_busy < self.resync_window:
            r = queue.popleft()
            self._resync_busy += 1
            io = IORequest(
                False, self.region_bytes, r * self.region_bytes, cls="resync", submitted=self.env._now
            )
            version = self._version[w].get(r, 0)
            self.wan.send(w, io.size, io).callbacks.append(
                lambda _e, r=r, v=version, io=io: self._copy_arrived(r, v, io, applier, epoch)
            )
        if not queue and self._resync_busy == 0:
            self._resynced()

    def _copy_arrived(self, r: int, version: int, io: IORequest, applier: Component, epoch: int) -> None:
        if self.wan.epoch != epoch:
            return
        applier.submit(io).callbacks.append(lambda _e: self._copied(r, version, epoch))

    def _copied(self, r: int, version: int, epoch: int) -> None:
        if self.wan.epoch != epoch or self.winner is None:
            return
        loser = 1 - self.winner
        self._hold(loser, range(r, r + 1), version)
        if self._version[loser].get(r, 0) >= self._acked.get(r, 0):
            self._dirty.pop(r, None)
        elif r in self._dirty:  # written again while it crossed: copy again
            self._resync_queue.append(r)
        self._resync_busy -= 1
        self._copy_more()

    def _resynced(self) -> None:
        for version in [v for r, v in self._acked.items() if r in self._dirty]:
            self._ack_time.pop(version, None)
        self._dirty.clear()
        self.mode = "replicating"
        self._record("resynchronised", self.winner, resync_s=self.env._now - self._resync_started)
        self.winner = None
        self._on_link_back()
        for s in (0, 1):
            self.suspended[s] = False
            held, self._held[s] = self._held[s], deque()
            for io, done in held:
                self._serve(s, io, done)

    # hooks for the modes
    def _on_link_lost(self) -> None:
        """The link (or the peer) just went away."""

    def _on_isolated(self, winner: int | None) -> None:
        """Failure detected: ``winner`` continues alone (None: nobody does)."""

    def _on_link_back(self) -> None:
        """Replication resumes."""

    # -- results -------------------------------------------------------------------------------------
    def stats(self, elapsed: float) -> dict[str, float]:
        out = {"writes_acked": float(self.writes_acked), "reads": float(self.reads)}
        if self.samples:
            lag = np.array([s[1] for s in self.samples])
            at_risk = np.array([s[2] for s in self.samples])
            out |= {"lag_p50_s": float(np.percentile(lag, 50)), "lag_p99_s": float(np.percentile(lag, 99)),
                    "lag_max_s": float(lag.max()), "bytes_at_risk_max": float(at_risk.max())}  # fmt: skip
        return out

    def timeline(self) -> pl.DataFrame:
        """Every sample of the measurement window: time (s), lag (s), data at risk (MB), mode."""
        return pl.DataFrame(
            [(t, lag, b / 1e6, m) for t, lag, b, m in self.samples],
            schema={"time_s": pl.Float64, "lag_s": pl.Float64, "at_risk_mb": pl.Float64, "mode": pl.String},
            orient="row",
        )

    def rpo(self, quantiles: Sequence[float] = (0.5, 0.9, 0.99, 1.0)) -> pl.DataFrame:
        """The recovery point as a distribution: quantiles of the lag (s) and of the data at risk (MB)
        over the samples of the measurement window."""
        tl = self.timeline()
        if tl.height == 0:
            raise ValueError(f"replicated volume {self.name!r}: no samples (run a simulation first)")
        return pl.DataFrame(
            {
                "quantile": list(quantiles),
                "lag_s": [float(np.quantile(tl["lag_s"], q)) for q in quantiles],
                "at_risk_mb": [float(np.quantile(tl["at_risk_mb"], q)) for q in quantiles],
            }
        )

    def failures(self) -> pl.DataFrame:
        """The failure events of the run and what they cost: time, event, site, mode, lag (s) and
        bytes at risk at that moment, bytes/writes/seconds lost at a site loss, resync time."""
        cols = {"time_s": pl.Float64, "event": pl.String, "site": pl.Int64, "mode": pl.String, "lag_s": pl.Float64,
                "bytes_at_risk": pl.Float64, "bytes_lost": pl.Float64, "writes_lost": pl.Int64,
                "seconds_lost": pl.Float64, "bytes_unapplied": pl.Float64, "resync_s": pl.Float64}  # fmt: skip
        rows = [{k: r.get(k) for k in cols} for r in self.failure_log]
        return pl.DataFrame(rows, schema=cols)

    def drain_time(self, after: float, below: float = 0.0) -> float:
        """Seconds from ``after`` (e.g. the end of a burst) until the data at risk is at most ``below``
        bytes (with delta sets there is always an open delta: give its usual size); ``inf`` if that never
        happens in the samples."""
        for t, _lag, b, _m in self.samples:
            if t >= after and b <= below:
                return t - after
        return float("inf")


class SyncMirror(ReplicatedVolume):
    """A synchronous mirror (VPLEX Metro distributed device, DRBD protocol C): a write is acknowledged
    only when both sites' copies have it; reads are served at the host's own site. While the link is
    up, nothing acknowledged is at risk."""

    def on_bind(self) -> None:
        super().on_bind()
        self._waiting: dict[int, list] = {}  # version -> [site, io, done, local_done, regions]
        self.audit: list[tuple[float, float, float]] = []  # (ack, local durable, remote durable) per write

    def _write(self, site: int, io: IORequest, done: Event) -> None:
        version = self._new_version()
        regions = self._regions(io)
        state = [site, io, done, None, regions, None]  # ..., local done time, regions, remote done time
        self._waiting[version] = state
        local_site = self.sites[site]

        def local_done(_e: Event) -> None:
            state[3] = self.env._now
            self._hold(site, regions, version)
            self._maybe_ack(version)

        local_site.volume.submit(io).callbacks.append(local_done)
        if self.mode in ("replicating", "resyncing"):
            self._remote_leg(version, state)

    def _remote_leg(self, version: int, state: list) -> None:
        site, io, _done, _ld, regions, _rd = state
        epoch, peer = self.wan.epoch, 1 - site
        if not self.site_up[peer] or not self.wan.up:
            return

        def arrived(_e: Event) -> None:
            if self.wan.epoch != epoch or not self.site_up[peer]:
                return
            self.sites[peer].applier.submit(io.child()).callbacks.append(applied)

        def applied(_e: Event) -> None:
            if self.wan.epoch != epoch or not self.site_up[peer]:
                return
            self._hold(peer, regions, version)
            self.wan.send(peer, 0, io).callbacks.append(acked)

        def acked(_e: Event) -> None:
            if self.wan.epoch != epoch:
                return
            state[5] = self.env._now
            self._maybe_ack(version)

        self.wan.send(site, io.size, io).callbacks.append(arrived)

    def _maybe_ack(self, version: int) -> None:
        state = self._waiting.get(version)
        if state is None or state[3] is None:
            return
        site = state[0]
        alone = self.mode == "isolated" and self.winner == site
        if state[5] is None and not alone:
            return
        del self._waiting[version]
        remote = state[5]
        self.audit.append((self.env._now, state[3], remote if remote is not None else float("nan")))
        self._acknowledge(state[4], version, state[2], state[1], dirty=remote is None, unreplicated=False)

    def _on_isolated(self, winner: int | None) -> None:
        for version, state in list(self._waiting.items()):
            if state[0] == winner:
                self._maybe_ack(version)
            else:  # the host at a suspended site will retry: hold it until the site resumes
                del self._waiting[version]
                self._held[state[0]].append((state[1], state[2]))

    def _on_link_back(self) -> None:
        for version, state in list(self._waiting.items()):
            if state[5] is None:
                self._remote_leg(version, state)


class _LogEntry:
    """One write in a replication log."""

    __slots__ = ("acked_at", "io", "on_received", "received", "regions")

    def __init__(self, io: IORequest, regions: range) -> None:
        self.io, self.regions = io, regions
        self.acked_at: float | None = None
        self.received = False
        self.on_received: Callable[[], None] | None = None


class _Delta:
    """A delta set: the regions written in one cycle (region -> latest version), the first write's
    acknowledgement time, its bytes, and where it is (open, closed, exchanging, exchanged, applying)."""

    __slots__ = ("first", "nbytes", "regions", "state")

    def __init__(self) -> None:
        self.regions: dict[int, int] = {}
        self.first: float | None = None
        self.nbytes = 0.0
        self.state = "open"


class AsyncReplica(ReplicatedVolume):
    """An asynchronous replica: hosts at the ``active`` site (default 0) write; a write is acknowledged
    locally and reaches the other site later over the link.

    - ``cycle == 0``: a **replication log** in write order (DRBD). ``protocol="A"``: acknowledged when
      the local copy is written and the write is in the send buffer; ``"B"``: when, in addition, the
      peer has received it (in memory); the peer writes it to its array afterwards. Up to ``window``
      writes cross the link at once.
    - ``cycle > 0``: **delta sets** (VPLEX Geo): writes go into the open delta (an overwrite of a region
      already in it adds nothing); every ``cycle`` seconds the open delta is closed if fewer than
      ``max_closed`` closed deltas wait; closed deltas cross the link one at a time (``window``
      extents of contiguous regions, each up to ``max_transfer`` bytes, in flight), are held by the
      other site, and are applied there in order, each as a whole.

    ``buffer_bytes`` bounds what is buffered at the writing site (log entries not yet applied, or the
    open delta and what of the closed ones has not crossed the link). A write that
    does not fit waits (the host is throttled) until sending and applying free space: when the write
    rate exceeds the drain rate (the lesser of the link and the remote array), write latency rises.
    With a site ``cache`` (a write-back appliance) a write is acknowledged when the cache has it and goes
    to the local array in the background; otherwise when the local array has it. When the link is lost,
    what was buffered becomes dirty regions, copied by the resync when it returns.
    """

    def __init__(
        self,
        name: str,
        sites: Sequence[Site],
        wan: WanLink,
        *,
        buffer_bytes: float,
        protocol: str = "A",
        cycle: float = 0.0,
        max_closed: int = 2,
        window: int = 256,
        max_transfer: int = 1 << 20,
        active: int = 0,
        **kwargs,
    ) -> None:
        kwargs.setdefault("preferred", active)
        super().__init__(name, sites, wan, **kwargs)
        if protocol not in ("A", "B"):
            raise ValueError(f"asynchronous replica {name!r}: protocol must be 'A' or 'B' (C is SyncMirror)")
        if protocol == "B" and cycle > 0:
            raise ValueError(f"asynchronous replica {name!r}: protocol 'B' is a write-order log (cycle 0)")
        if not buffer_bytes > 0 or not cycle >= 0 or max_closed < 1 or window < 1 or active not in (0, 1):
            raise ValueError(
                f"asynchronous replica {name!r}: need buffer_bytes > 0, cycle >= 0 s, max_closed >= 1, "
                f"window >= 1 and active site 0 or 1"
            )
        self.buffer_bytes, self.protocol, self.cycle = float(buffer_bytes), protocol, float(cycle)
        self.max_closed, self.window, self.active = max_closed, window, active
        self.max_transfer = int(max_transfer)

    def on_bind(self) -> None:
        super().on_bind()
        self.buffered = 0.0  # bytes reserved in the log or the deltas
        self._waiters: deque = deque()  # (bytes needed, callback) of throttled writes, FIFO
        self._log: dict[int, _LogEntry] = {}  # version -> entry, in write order
        self._awaiting_receipt: set[_LogEntry] = set()  # protocol B: written locally, peer not heard
        self._unsent: deque = deque()  # versions not yet sent
        self._in_flight = 0
        self._log_acked_bytes = 0.0
        self._open = _Delta()
        self._closed: deque[_Delta] = deque()
        self._exchanging = self._applying = False
        if self.cycle > 0:
            self.env.process(self._closer())

    def reset_stats(self) -> None:
        super().reset_stats()
        self.throttled = 0
        self.throttle_time = 0.0

    def submit_at(self, site: int, io: IORequest) -> Event:
        if site != self.active and not io.is_read:
            raise ValueError(
                f"asynchronous replica {self.name!r}: hosts write at the active site ({self.active}) only"
            )
        return super().submit_at(site, io)

    # -- admission (throttling) ----------------------------------------------------------------------
    def _write(self, site: int, io: IORequest, done: Event) -> None:
        if self.mode != "replicating":
            self._write_local(site, io, done, replicate=False)
            return
        need = float(io.size)
        if self._waiters or self.buffered + need > self.buffer_bytes:
            self.throttled += 1
            t0 = self.env._now

            def admitted() -> None:
                self.throttle_time += self.env._now - t0
                self._admit(site, io, done, need)

            self._waiters.append((need, admitted))
            return
        self._admit(site, io, done, need)

    def _admit(self, site: int, io: IORequest, done: Event, need: float) -> None:
        if self.mode != "replicating":  # the link went while the write waited
            self._write_local(site, io, done, replicate=False)
            return
        self.buffered += need
        self._write_local(site, io, done, replicate=True, reserved=need)

    def _release(self, nbytes: float) -> None:
        self.buffered -= nbytes
        while self._waiters and self.buffered + self._waiters[0][0] <= self.buffer_bytes:
            _need, go = self._waiters.popleft()
            go()

    def _write_local(
        self, site: int, io: IORequest, done: Event, replicate: bool, reserved: float = 0.0
    ) -> None:
        version = self._new_version()
        regions = self._regions(io)
        local = self.sites[site]
        entry = None
        if replicate and self.cycle == 0:
            entry = self._log[version] = _LogEntry(io, regions)
            self._unsent.append(version)
            self._pump()

        def acknowledge() -> None:
            if replicate and self.cycle > 0:
                self._add_to_delta(regions, version, reserved)
            if entry is not None and version in self._log:
                entry.acked_at = self.env._now
                self._log_acked_bytes += io.size
            unreplicated = replicate and (entry is None or version in self._log)
            self._acknowledge(regions, version, done, io, dirty=not replicate, unreplicated=unreplicated)

        def locally_written() -> None:
            if (
                self.protocol == "B"
                and entry is not None
                and not entry.received
                and self.mode == "replicating"
            ):
                entry.on_received = acknowledge
                self._awaiting_receipt.add(entry)
            else:
                acknowledge()

        def on_volume(_e: Event) -> None:
            self._hold(site, regions, version)
            if local.cache is None:
                locally_written()

        if local.cache is not None:
            local.cache.submit(io).callbacks.append(lambda _e: locally_written())
            local.volume.submit(io.child()).callbacks.append(on_volume)
        else:
            local.volume.submit(io).callbacks.append(on_volume)

    # -- log mode ------------------------------------------------------------------------------------
    def _pump(self) -> None:
        if self.mode != "replicating" or not self.wan.up:
            return
        epoch = self.wan.epoch
        while self._unsent and self._in_flight < self.window:
            version = self._unsent.popleft()
            entry = self._log.get(version)
            if entry is None:
                continue
            self._in_flight += 1
            self.wan.send(self.active, entry.io.size, entry.io).callbacks.append(
                lambda _e, v=version, e=entry: self._arrived(v, e, epoch)
            )

    def _arrived(self, version: int, entry: _LogEntry, epoch: int) -> None:
        if self.wan.epoch != epoch:
            return
        peer = 1 - self.active
        if self.protocol == "B":  # the peer has it in memory: its acknowledgement crosses back
            self.wan.send(peer, 0, entry.io).callbacks.append(lambda _e: self._received(entry, epoch))
        self.sites[peer].applier.submit(entry.io.child()).callbacks.append(
            lambda _e: self._log_applied(version, entry, epoch)
        )

    def _received(self, entry: _LogEntry, epoch: int) -> None:
        if self.wan.epoch != epoch:
            return
        entry.received = True
        if entry.on_received is not None:
            go, entry.on_received = entry.on_received, None
            self._awaiting_receipt.discard(entry)
            go()

    def _log_applied(self, version: int, entry: _LogEntry, epoch: int) -> None:
        if self.wan.epoch != epoch:
            return
        self._hold(1 - self.active, entry.regions, version)
        self._log.pop(version, None)
        if entry.acked_at is not None:
            self._log_acked_bytes -= entry.io.size
        self._ack_time.pop(version, None)
        self._in_flight -= 1
        self._release(float(entry.io.size))
        self._pump()

    # -- delta mode ----------------------------------------------------------------------------------
    def _add_to_delta(self, regions: range, version: int, reserved: float) -> None:
        delta = self._open
        new = 0
        for r in regions:
            if r not in delta.regions:
                new += 1
            delta.regions[r] = version
        if delta.first is None:
            delta.first = self.env._now
        added = new * float(self.region_bytes)
        delta.nbytes += added
        self._release(reserved - added)  # the reservation becomes what the delta really grew by

    def _closer(self):
        while True:
            yield self.env.timeout(self.cycle)
            if self.mode == "replicating" and self._open.regions and len(self._closed) < self.max_closed:
                self._open.state = "closed"
                self._closed.append(self._open)
                self._open = _Delta()
                self._pump_deltas()

    def _pump_deltas(self) -> None:
        if self.mode != "replicating" or not self.wan.up:
            return
        epoch, peer = self.wan.epoch, 1 - self.active
        if not self._exchanging:
            delta = next((d for d in self._closed if d.state == "closed"), None)
            if delta is not None:
                self._exchanging = True
                delta.state = "exchanging"
                self._transfer(delta, epoch, lambda io: self.wan.send(self.active, io.size, io), "exchanged")
        if not self._applying and self._closed and self._closed[0].state == "exchanged":
            self._applying = True
            delta = self._closed[0]
            delta.state = "applying"
            self._transfer(delta, epoch, lambda io: self.sites[peer].applier.submit(io), "applied")

    def _extents(self, delta: _Delta) -> list[tuple[int, int]]:
        """The delta's regions as extents (first region, count) of contiguous regions, each at most
        ``max_transfer`` bytes: what one message on the link, or one write at the other site, carries."""
        most = max(1, self.max_transfer // self.region_bytes)
        out: list[tuple[int, int]] = []
        for r in sorted(delta.regions):
            if out and out[-1][0] + out[-1][1] == r and out[-1][1] < most:
                out[-1] = (out[-1][0], out[-1][1] + 1)
            else:
                out.append((r, 1))
        return out

    def _transfer(self, delta: _Delta, epoch: int, step: Callable[[IORequest], Event], state: str) -> None:
        """Put every extent of ``delta`` through ``step`` with ``window`` in flight; then mark it
        ``state``. While exchanging, each extent's buffer space is freed once it has crossed (it is
        then held by the other site until applied)."""
        todo = deque(self._extents(delta))
        left = [len(todo)]
        exchanging = state == "exchanged"

        def one() -> None:
            if todo:
                first, count = todo.popleft()
                nbytes = count * self.region_bytes
                io = IORequest(
                    False, nbytes, first * self.region_bytes, cls="replication", submitted=self.env._now
                )
                step(io).callbacks.append(lambda _e: finished(nbytes))

        def finished(nbytes: int) -> None:
            if self.wan.epoch != epoch:
                return
            left[0] -= 1
            if exchanging:
                self._release(float(nbytes))
            if left[0] == 0:
                self._delta_done(delta, state)
            else:
                one()

        if not todo:
            self._delta_done(delta, state)
        for _ in range(min(self.window, len(todo))):
            one()

    def _delta_done(self, delta: _Delta, state: str) -> None:
        delta.state = state
        if state == "exchanged":
            self._exchanging = False
        else:
            self._applying = False
            peer = 1 - self.active
            for r, v in delta.regions.items():
                self._hold(peer, range(r, r + 1), v)
                self._ack_time.pop(v, None)
            self._closed.popleft()
        self._pump_deltas()

    # -- what is at risk, and failures -----------------------------------------------------------------
    def _at_risk(self) -> tuple[float, float]:
        now = self.env._now
        if self._dirty:
            return now - next(iter(self._dirty.values())), len(self._dirty) * float(self.region_bytes)
        if self.cycle == 0:
            oldest = next((e.acked_at for e in self._log.values() if e.acked_at is not None), None)
            return (now - oldest if oldest is not None else 0.0), self._log_acked_bytes
        deltas = [*self._closed, self._open]
        firsts = [d.first for d in deltas if d.first is not None]
        return (now - min(firsts) if firsts else 0.0), sum(d.nbytes for d in deltas)

    def _unapplied_regions(self) -> set[int]:
        regions = set(self._dirty)
        for e in self._log.values():
            if e.acked_at is not None:
                regions.update(e.regions)
        for d in [*self._closed, self._open]:
            regions.update(d.regions)
        return regions

    def _on_link_lost(self) -> None:
        """What was buffered becomes dirty regions (copied by the resync); writes then continue at the
        active site, tracked as dirty; the passive site suspends."""
        now = self.env._now
        regions: dict[int, float] = {}
        for e in self._log.values():
            for r in e.regions:
                regions.setdefault(r, e.acked_at if e.acked_at is not None else now)
        for d in [*self._closed, self._open]:
            for r in d.regions:
                regions.setdefault(r, d.first if d.first is not None else now)
        for r, t in sorted(regions.items(), key=lambda kv: kv[1]):
            self._dirty.setdefault(r, t)
        waiting_b = [e.on_received for e in self._awaiting_receipt if e.on_received is not None]
        self._awaiting_receipt.clear()
        self._log.clear()
        self._unsent.clear()
        self._log_acked_bytes = 0.0
        self._closed.clear()
        self._open = _Delta()
        self._in_flight = 0
        self._exchanging = self._applying = False
        self._release(self.buffered)
        for go in waiting_b:  # protocol B: the peer is gone; those writes stay local (dirty)
            go()
        self.suspended[1 - self.active] = True

    def _on_isolated(self, winner: int | None) -> None:
        if winner != self.active:
            self.suspended[self.active] = True

    def _on_link_back(self) -> None:
        self._pump()
        self._pump_deltas()
