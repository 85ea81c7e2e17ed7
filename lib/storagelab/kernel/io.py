"""The IO request: the unit of work that flows through every component of a simulated storage path.

SI units inside: sizes and addresses in bytes, times in seconds. Convert only at the edges.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

READ = True
WRITE = False


@dataclass(slots=True, eq=False)
class IORequest:
    """One block IO: a read or a write of ``size`` bytes at byte ``address`` of ``volume``.

    ``cls`` is the workload or tenant class the IO belongs to (used by priority and QoS disciplines and
    to split metrics). ``submitted`` is the simulation time (s) the IO entered the system. ``hops`` is
    reserved for per-hop timestamps (no component records them yet). ``tag`` carries anything a
    component wants to attach; a member IO made by :meth:`child` carries its parent there.
    """

    is_read: bool
    size: int
    address: int = 0
    volume: int = 0
    cls: str = "default"
    submitted: float = 0.0
    hops: list[tuple[str, float]] | None = None
    tag: Any = None
    priority: int = field(default=0)

    def validate(self) -> IORequest:
        """Check the fields (sources validate their samplers in bulk instead, off the per-IO path)."""
        if self.size <= 0:
            raise ValueError(f"IO size must be > 0 bytes, got {self.size}")
        if self.address < 0:
            raise ValueError(f"IO address must be >= 0, got {self.address}")
        return self

    @property
    def op(self) -> str:
        """``'read'`` or ``'write'``."""
        return "read" if self.is_read else "write"

    def child(
        self,
        *,
        size: int | None = None,
        address: int | None = None,
        is_read: bool | None = None,
        volume: int | None = None,
    ) -> IORequest:
        """A member IO derived from this one (striping, mirroring, read-modify-write), same class and time."""
        return IORequest(
            self.is_read if is_read is None else is_read,
            self.size if size is None else size,
            self.address if address is None else address,
            self.volume if volume is None else volume,
            self.cls,
            self.submitted,
            None,
            self,
            self.priority,
        )
