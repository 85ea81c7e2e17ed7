"""Quality of service: schedulers that decide which tenant's IO a station serves next, plugged into a
:class:`~storagelab.kernel.Station` as its queue discipline (the kernel's hold-back hook).

- :class:`~storagelab.qos.mclock.MClock`: reservation, limit and weight per tenant (Gulati, Merchant and
  Varman, "mClock: Handling Throughput Variability for Hypervisor IO Scheduling", OSDI 2010).
- :class:`~storagelab.qos.dmclock.DmClock`: mClock across several servers, with each client's delta/rho
  counts (:func:`~storagelab.qos.dmclock.dmclock_servers`).
- :class:`~storagelab.qos.service_levels.ServiceLevels`: per-volume minimum IOPS, minimum bandwidth and
  maximum latency, the volumes furthest below their targets first (NexGen N5 service levels).
- :class:`~storagelab.qos.token_bucket.TokenBucket`: a per-tenant IOPS or bandwidth limit with a burst, as
  hypervisors offer per VM.
"""

from storagelab.qos.dmclock import DmClock, DmClockRouter, dmclock_servers
from storagelab.qos.mclock import ClientQoS, MClock
from storagelab.qos.service_levels import ServiceLevel, ServiceLevels
from storagelab.qos.token_bucket import Bucket, TokenBucket

__all__ = [
    "Bucket",
    "ClientQoS",
    "DmClock",
    "DmClockRouter",
    "MClock",
    "ServiceLevel",
    "ServiceLevels",
    "TokenBucket",
    "dmclock_servers",
]
