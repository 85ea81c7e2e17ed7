"""The state every replication mode shares: :class:`ReplicatedVolume` (two sites, the link, the version
of every region each site holds, the failure events, the lag sampler, the resynchronisation after a
link loss, the results) and the front end the hosts at each site submit to. The modes say how a write
is replicated: :mod:`.sync_mirror`, :mod:`.async_replica` (:mod:`.log_replica`, :mod:`.delta_set_replica`)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence

import numpy as np
import polars as pl
from simpy.events import Event

from storagelab.components.replication.failures import Failure, LinkChange, LinkLoss, LinkRestore, SiteLoss
from storagelab.components.replication.wan_link import Site, WanLink
from storagelab.kernel.component import Component, fire
from storagelab.kernel.io import IORequest


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
    alone) or ``resyncing`` (dirty regions are being copied back).

    ``engine_local`` and ``engine_remote`` (s, default 0) are the replication engine's work per write at
    each end: at the writing site before the write goes anywhere (received, ordered, journalled), at the
    receiving site before the write is applied and acknowledged. Each is a pure delay on the write's path,
    not a station: it does not queue. The engine's concurrency (its cores or directors) is not known for
    an arbitrary preset, and a single-server station would serialise every write of the pair; a model
    whose engine has known hardware models it as a station of its own (the VPLEX directors) and leaves
    these at 0. So at loads where the engine's cores saturate this underestimates the write latency.
    Resynchronisation copies pay neither."""

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
        engine_local: float = 0.0,
        engine_remote: float = 0.0,
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
        for what, cost in (("engine_local", engine_local), ("engine_remote", engine_remote)):
            if not cost >= 0:
                raise ValueError(f"replicated volume {name!r}: {what} must be >= 0 s, got {cost}")
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
        self.engine_local, self.engine_remote = float(engine_local), float(engine_remote)
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
        # writes the other site will get only from a resync (taken while not replicating, or whose buffer
        # was dropped) and not yet written locally: the regions they dirty are known only when they land
        self._dirty_in_flight = 0
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

    # -- the replication engine's per-write work at each end -----------------------------------------
    def _after_local_engine(self, site: int, io: IORequest, done: Event, go: Callable[[], None]) -> None:
        """Run ``go`` once the engine at the writing site has taken the host write (received, ordered,
        journalled it): ``engine_local`` seconds, a pure delay (it does not queue: see the module). A
        site lost meanwhile completes nothing; a site suspended meanwhile holds the write, which is served
        again (and pays the engine again) when the site resumes."""
        if self.engine_local <= 0:
            go()
            return

        def resume(_e: Event) -> None:
            if not self.site_up[site]:
                return
            if self.suspended[site]:
                self._held[site].append((io, done))
                return
            go()

        self.env.timeout(self.engine_local).callbacks.append(resume)

    def _after_remote_engine(self, go: Callable[[], None]) -> None:
        """Run ``go`` once the engine at the receiving site has taken a replicated write (received and
        ordered or journalled it, before it is applied and acknowledged): ``engine_remote`` seconds, a pure
        delay."""
        if self.engine_remote <= 0:
            go()
            return
        self.env.timeout(self.engine_remote).callbacks.append(lambda _e: go())

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
        now = self.env.now
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
        now = self.env.now
        if self._dirty:
            return now - next(iter(self._dirty.values())), len(self._dirty) * float(self.region_bytes)
        return 0.0, 0.0

    # -- the sampler and the failure events ----------------------------------------------------------
    def _sampler(self):
        while True:
            lag, nbytes = self._at_risk()
            self.samples.append((self.env.now, lag, nbytes, self.mode))
            yield self.env.timeout(self.sample_interval)

    def _failures(self):
        for f in self.failure_schedule:
            if f.at > self.env.now:
                yield self.env.timeout(f.at - self.env.now)
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
            {"time_s": self.env.now, "event": event, "site": site, "mode": self.mode, "lag_s": lag,
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
        if not all(self.site_up):  # a site is lost: replication cannot resume; the detection decides
            return
        if self.mode == "detecting" and not self._dirty and not self._dirty_in_flight:
            # back before anyone decided and nothing was written alone: resend what waits
            self.mode = "replicating"
            self._on_link_back()
            return
        if self.mode == "detecting":  # an asynchronous replica's buffer, or its writes taken alone, are dirty
            self.winner = self.preferred
            self.suspended[1 - self.preferred] = True
            self.mode = "isolated"
        if self.mode == "isolated" and self.winner is not None and all(self.site_up):
            self.mode = "resyncing"
            self._resync_started = self.env.now
            self._resync()

    def _site_down(self, site: int) -> None:
        if not self.site_up[site]:
            return
        survivor = 1 - site
        missing = self.missing_at(survivor)
        lost_since = min(
            (self._ack_time.get(v, self.env.now) for v in missing.values()), default=self.env.now
        )
        self._record(
            "site loss", site, bytes_unapplied=self._unapplied_bytes(), bytes_lost=len(missing) * float(self.region_bytes), writes_lost=len(set(missing.values())),
            seconds_lost=self.env.now - lost_since,
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
        region written (alone) during the copy joins the queue. The resync ends when nothing is queued or
        crossing and no write that dirties a region is still landing (``_dirty_in_flight``)."""
        self._resync_queue = deque(self._dirty)
        self._resync_busy = 0
        self._resync_epoch += 1  # this resync's copies: those of one ended (link or site lost) are forgotten
        self._copy_more()

    def _copy_more(self) -> None:
        w, epoch = self.winner, self._resync_epoch
        if w is None or self.mode != "resyncing":
            return
        applier = self.sites[1 - w].applier
        queue = self._resync_queue
        while queue and self._resync_busy < self.resync_window:
            r = queue.popleft()
            self._resync_busy += 1
            io = IORequest(
                False, self.region_bytes, r * self.region_bytes, cls="resync", submitted=self.env.now
            )
            version = self._version[w].get(r, 0)
            self.wan.send(w, io.size, io).callbacks.append(
                lambda _e, r=r, v=version, io=io: self._copy_arrived(r, v, io, applier, epoch)
            )
        if not queue and self._resync_busy == 0 and not self._dirty_in_flight:
            self._resynced()  # a write taken alone still landing keeps the resync open: it dirties a region

    def _copy_arrived(self, r: int, version: int, io: IORequest, applier: Component, epoch: int) -> None:
        if self._resync_epoch != epoch or self.mode != "resyncing":
            return
        applier.submit(io).callbacks.append(lambda _e: self._copied(r, version, epoch))

    def _copied(self, r: int, version: int, epoch: int) -> None:
        if self._resync_epoch != epoch or self.mode != "resyncing" or self.winner is None:
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
        self._record("resynchronised", self.winner, resync_s=self.env.now - self._resync_started)
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
