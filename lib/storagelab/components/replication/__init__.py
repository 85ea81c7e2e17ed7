"""Replication between two sites over a WAN: synchronous mirrors (VPLEX Metro, DRBD protocol C),
asynchronous replicas with a replication log (DRBD protocols A and B) or with delta sets closed every
cycle (VPLEX Geo), and the failures that test them.

A replicated volume has two :class:`Site` s joined by a :class:`WanLink`. It keeps, per site, the
version of every region (``region_bytes`` of the address space) that site holds, and the latest version
a host was told is written. So at any instant it knows which acknowledged writes a site does not yet
hold: the **data at risk** (bytes) and the **lag** (seconds since the oldest such write was
acknowledged: the recovery point if the other site were lost now). A sampler records both every
``sample_interval`` seconds (:meth:`ReplicatedVolume.timeline`, :meth:`ReplicatedVolume.rpo`).

The replication engine's work per write (``engine_local`` at the writing site, before the write goes
anywhere; ``engine_remote`` at the receiving site, before the write is applied and acknowledged) is a pure
delay on the write's path: it does not queue (see :class:`ReplicatedVolume`).

Failures are events of the run (:class:`LinkLoss`, :class:`LinkRestore`, :class:`LinkChange`,
:class:`SiteLoss`), given when the volume is built:

- **link loss**: writes that need the other site wait; after ``detection_time`` the winner continues
  alone (the ``preferred`` site, or with a ``witness`` whichever site is still up), tracking the regions
  it writes as dirty; the other site suspends its IO.
- **link restore**: the dirty regions are copied to the other site over the link (``resync_window``
  copies in flight), new writes replicate again, and the suspended site resumes when the copy is done.
  A write taken alone and still being written locally keeps the copy open (its region is dirty only
  once it lands), and makes a link back before detection resynchronise rather than simply resume.
- **site loss**: the site's IOs never complete and its hosts are told nothing more; what the survivor
  does not hold of the acknowledged writes is lost (bytes and seconds in
  :meth:`ReplicatedVolume.failures`), and it stays lost: what was crossing the link (a log's writes, a
  delta set's extents, a resync's copies) is forgotten with the buffer or resync it belonged to. The
  survivor continues after ``detection_time`` if it is the preferred site or a witness says the other is
  gone, else it suspends; the link's return does not resume replication.

The modules, one concept each:

- :mod:`.failures`: the failure events (:class:`LinkLoss`, :class:`LinkRestore`, :class:`LinkChange`,
  :class:`SiteLoss`, and their union :data:`Failure`);
- :mod:`.wan_link`: the inter-site link (:class:`WanLink`) and a site's components (:class:`Site`);
- :mod:`.volume`: :class:`ReplicatedVolume`, what every mode shares (region versions, the mode's state
  machine, failures, resynchronisation, lag sampling, results) and the front end of each site;
- :mod:`.sync_mirror`: :class:`SyncMirror`, acknowledged once both sites have the write;
- :mod:`.async_replica`: :class:`AsyncReplica`, the abstract base of the asynchronous replicas
  (admission into a bounded buffer, throttling, the local write, link loss);
- :mod:`.log_replica`: :class:`LogReplica`, a replication log in write order (DRBD protocols A, B);
- :mod:`.delta_set_replica`: :class:`DeltaSetReplica`, delta sets closed every cycle (VPLEX Geo).

Sources: DRBD's protocols A/B/C (when a write is acknowledged: local disk and the send buffer, local
disk and the peer's memory, both disks), VPLEX Metro's synchronous write-through and VPLEX Geo's
asynchronous write-back with delta sets (EMC, *VPLEX with XtremIO 2.4*: "VPLEX Geo performance will be
limited to the available drain-rate, which is a function of the available WAN bandwidth and XtremIO
performance at each cluster").
"""

from storagelab.components.replication.async_replica import AsyncReplica
from storagelab.components.replication.delta_set_replica import DeltaSetReplica
from storagelab.components.replication.failures import Failure, LinkChange, LinkLoss, LinkRestore, SiteLoss
from storagelab.components.replication.log_replica import LogReplica
from storagelab.components.replication.sync_mirror import SyncMirror
from storagelab.components.replication.volume import ReplicatedVolume
from storagelab.components.replication.wan_link import Site, WanLink

__all__ = [
    "AsyncReplica",
    "DeltaSetReplica",
    "Failure",
    "LinkChange",
    "LinkLoss",
    "LinkRestore",
    "LogReplica",
    "ReplicatedVolume",
    "Site",
    "SiteLoss",
    "SyncMirror",
    "WanLink",
]
