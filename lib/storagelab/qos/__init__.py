"""Quality of service: schedulers that decide which tenant's IO a station serves next, plugged into a
:class:`~storagelab.kernel.Station` as its queue discipline (the kernel's hold-back hook).

- :class:`~storagelab.qos.mclock.MClock`: reservation, limit and weight per tenant (Gulati, Merchant and
  Varman, "mClock: Handling Throughput Variability for Hypervisor IO Scheduling", OSDI 2010).
"""

from storagelab.qos.mclock import ClientQoS, MClock

__all__ = ["ClientQoS", "MClock"]
