"""The failures and link changes a replicated volume is given when it is built, as events of a run:
:class:`LinkLoss`, :class:`LinkRestore`, :class:`LinkChange` and :class:`SiteLoss` (what each does to
the volume: :mod:`storagelab.components.replication`)."""

from __future__ import annotations

from dataclasses import dataclass


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
