"""Address spaces: an extent (a region of another component's address space, as a component of its own)
and a LUN (a number the IOs addressed to it carry).

A virtual disk on a shared datastore or LUN occupies the bytes ``[offset, offset + length)`` of it: an
IO at byte ``a`` of the extent is an IO at byte ``offset + a`` of the target. With ``wrap`` the extent's
addresses are taken modulo ``length`` first: the shape of a log-structured write buffer or a cache
device, whose frames are reused whatever the data's address (an IO that would cross the end starts at
frame 0).
"""

from __future__ import annotations

from storagelab.devices import CapacityExceeded
from storagelab.kernel.component import Component, EventLike
from storagelab.kernel.io import IORequest


class Extent(Component):
    """``length`` bytes of ``target`` from byte ``offset`` (see the module docstring)."""

    def __init__(self, name: str, target: Component, *, offset: int = 0, length: int | None = None,
                 wrap: bool = False) -> None:  # fmt: skip
        super().__init__(name)
        if offset < 0 or (length is not None and length <= 0):
            raise ValueError(
                f"extent {name!r}: offset must be >= 0 and length > 0 bytes, got {offset}, {length}"
            )
        if wrap and length is None:
            raise ValueError(f"extent {name!r}: wrap needs a length")
        self.target, self.offset, self.length, self.wrap = target, offset, length, wrap

    def children(self) -> list[Component]:
        return [self.target]

    def submit(self, io: IORequest) -> EventLike:
        a = io.address
        length = self.length
        if self.wrap and length is not None:  # (wrap has a length: __init__ says so)
            a %= length
            if a + io.size > length:
                a = 0
        elif length is not None and a + io.size > length:
            raise CapacityExceeded(
                f"extent {self.name!r}: IO [{a}, {a + io.size}) runs past its length {self.length} bytes"
            )
        io.address = a + self.offset
        return self.target.submit(io)


class Lun(Component):
    """A logical unit: IOs addressed to it carry its ``number`` (in :attr:`IORequest.volume`, as a SCSI
    command carries its LUN), so that the array behind can tell its LUNs apart whatever the IO's class
    (per-LUN QoS keys on it), and pass on to ``target``. With ``capacity`` (bytes), an IO past it raises
    :class:`~storagelab.devices.CapacityExceeded`: the data placed on the LUN does not fit where the array
    keeps it (for a LUN whose data lands on devices only some of the time, as a LUN served from a flash tier,
    the devices alone would not say so)."""

    def __init__(self, name: str, number: int, target: Component, *, capacity: int | None = None) -> None:
        super().__init__(name)
        if capacity is not None and capacity <= 0:
            raise ValueError(f"LUN {name!r}: capacity must be > 0 bytes, got {capacity}")
        self.number, self.target, self.capacity = number, target, capacity

    def children(self) -> list[Component]:
        return [self.target]

    def submit(self, io: IORequest) -> EventLike:
        if self.capacity is not None and io.address + io.size > self.capacity:
            raise CapacityExceeded(
                f"{self.name}: IO [{io.address}, {io.address + io.size}) runs past the capacity {self.capacity} bytes"
            )
        io.volume = self.number
        return self.target.submit(io)


__all__ = ["Extent", "Lun"]
