"""A hyper-converged cluster: data placed across nodes, each block kept on ``replicas`` nodes.

This is the shape of a Virtual SAN datastore with *failures to tolerate = 1*: every write goes to two
hosts and completes when both have it; a read is served by one copy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

from storagelab.components.tiering import WorkingSetReadCache
from storagelab.kernel.component import Component, EventLike, Signal, TimedComponent, completion_in
from storagelab.kernel.composition import AllOf
from storagelab.kernel.io import IORequest


class ReplicatedCluster(Component):
    """Nodes holding ``replicas`` copies of each ``placement_bytes`` region of the address space.

    The region at byte ``a`` has its primary on node ``(a // placement_bytes) % n`` and its other
    copies on the following nodes. Reads go to one copy (the primary, or round-robin over copies with
    ``read_policy="round-robin"``); writes go to every copy and complete when all have.

    With ``compact`` each node addresses only what it holds: its copies of the regions, packed one after
    another, so a cluster of ``n`` nodes holds ``n / replicas`` times what one node does, as a
    hyper-converged datastore does. A node's ``j``-th region of copy ``k`` (region ``r = j n + (node -
    k) mod n``) is node-local region ``(j // copy_run) * copy_run * replicas + k * copy_run + j %
    copy_run``: each copy's regions lie in runs of ``copy_run``, so that whatever a node stripes its
    addresses over (its capacity devices), every copy, and so the reads of the primaries, spreads over
    all of them (with runs of one region and two copies, the primaries would take every other region,
    half the devices of an even stripe). A node addresses at most ``copy_run x replicas`` regions more
    than it holds. Without ``compact`` every node sees the cluster's addresses (nodes that are whole
    systems, e.g. one desktop host each).

    A node's :class:`~storagelab.components.tiering.WorkingSetReadCache` sizes the data whose reads it
    serves from the range its reads span; the cluster tells it (its ``served_share``) what share of
    that range holds such data: with ``compact`` and reads to the primary, ``1 / replicas`` (the node's
    other copies lie between its primaries and are only written); without ``compact``, ``1 / n`` (the
    regions whose primary is the node), or ``replicas / n`` with round-robin reads. A cache reached
    from ``k`` nodes (one array behind every node) serves ``k`` times that share, at most all of it.
    """

    def __init__(
        self,
        name: str,
        nodes: Sequence[Component],
        replicas: int = 2,
        placement_bytes: int = 1 << 20,
        read_policy: str = "primary",
        compact: bool = False,
        copy_run: int = 64,
    ) -> None:
        super().__init__(name)
        if not 1 <= replicas <= len(nodes):
            raise ValueError(
                f"cluster {name!r}: replicas must be in 1..{len(nodes)} (node count), got {replicas}"
            )
        if placement_bytes <= 0:
            raise ValueError(f"cluster {name!r}: placement_bytes must be > 0, got {placement_bytes}")
        if read_policy not in ("primary", "round-robin"):
            raise ValueError(
                f"cluster {name!r}: read_policy must be 'primary' or 'round-robin', got {read_policy!r}"
            )
        self.nodes = list(nodes)
        self.replicas, self.placement_bytes, self.read_policy = replicas, placement_bytes, read_policy
        if isinstance(copy_run, bool) or not isinstance(copy_run, int) or copy_run < 1:
            raise ValueError(
                f"cluster {name!r}: copy_run must be an integer >= 1 (regions), got {copy_run!r}"
            )
        self.compact, self.copy_run = compact, copy_run
        self._rr = 0
        self.reset_stats()
        self._tell_read_caches()

    def _tell_read_caches(self) -> None:
        """Set the ``served_share`` of the working-set read caches below the nodes (see the class doc)."""
        n = len(self.nodes)
        if self.read_policy == "primary":
            per_node = 1.0 / self.replicas if self.compact else 1.0 / n
        else:
            per_node = 1.0 if self.compact else self.replicas / n
        reached: dict[int, list] = {}  # id -> [cache, nodes it is reached from]
        for node in self.nodes:
            seen: set[int] = set()
            stack: list[Component] = [node]
            while stack:
                c = stack.pop()
                if id(c) in seen:
                    continue
                seen.add(id(c))
                if isinstance(c, WorkingSetReadCache):
                    reached.setdefault(id(c), [c, 0])[1] += 1
                stack.extend(c.children())
        for cache, count in reached.values():
            cache.served_share *= min(1.0, count * per_node)

    def children(self) -> list[Component]:
        return self.nodes

    def reset_stats(self) -> None:
        self.node_ios = 0

    def on_bind(self) -> None:
        # When every node can say at arrival when an IO completes (FIFO stations on their fast path),
        # so can the cluster: a write completes at the later of its copies. One event per IO then.
        self.timed = all(getattr(node, "timed", False) for node in self.nodes)
        self._timed_nodes = [cast(TimedComponent, node) for node in self.nodes]  # used only when timed

    def _targets(self, io: IORequest) -> list[int]:
        n = len(self.nodes)
        primary = (io.address // self.placement_bytes) % n
        if io.is_read:
            if self.read_policy == "round-robin":
                self._rr = (self._rr + 1) % self.replicas
                primary = (primary + self._rr) % n
            return [primary]
        return [(primary + k) % n for k in range(self.replicas)]

    def submit_timed(self, io: IORequest) -> float:
        """When every node is timed: the completion time of ``io`` (the latest of its copies)."""
        nodes = self._timed_nodes
        if io.is_read and self.read_policy == "primary":
            self.node_ios += 1
            node = (io.address // self.placement_bytes) % len(nodes)
            if self.compact:
                io.address = self._local_address(io.address, node)
            return nodes[node].submit_timed(io)
        targets = self._targets(io)
        self.node_ios += len(targets)
        done = nodes[targets[0]].submit_timed(self._local(io, targets[0]))
        for k in targets[1:]:
            t = nodes[k].submit_timed(self._local(io, k))
            if t > done:
                done = t
        return done

    def _local(self, io: IORequest, node: int) -> IORequest:
        """``io`` as node ``node`` sees it: itself, or with ``compact`` a member IO at the node's address."""
        if not self.compact:
            return io
        return io.child(address=self._local_address(io.address, node))

    def _local_address(self, address: int, node: int) -> int:
        """With ``compact``: where node ``node`` holds its copy of cluster byte ``address``."""
        n, size, copy_run = len(self.nodes), self.placement_bytes, self.copy_run
        region, offset = divmod(address, size)
        run, j = divmod(region // n, copy_run)
        return ((run * self.replicas + (node - region) % n) * copy_run + j) * size + offset

    def timed_entry(self) -> Callable[[IORequest], EventLike | float]:
        """What a caller that wakes at a completion time calls per IO: where every node is timed, a
        function giving the time the IO's event would fire at (:meth:`submit_timed`), else :meth:`submit`."""
        return self._arrive_timed if self.timed else self.submit

    def _arrive_timed(self, io: IORequest) -> float:
        now = self.env._now
        return now + (self.submit_timed(io) - now)

    def submit(self, io: IORequest) -> EventLike:
        if self.timed:
            env = self.env
            return completion_in(env, self.submit_timed(io) - env._now, io)
        if io.is_read:
            # one copy serves a read: the read itself goes there, at that node's address with ``compact``
            # (rewritten on the way down, as an Extent does; nothing above a cluster reads it back);
            # the node is self._targets(io)[0], inline
            nodes = self.nodes
            n = len(nodes)
            node = (io.address // self.placement_bytes) % n
            if self.read_policy == "round-robin":
                self._rr = (self._rr + 1) % self.replicas
                node = (node + self._rr) % n
            self.node_ios += 1
            if self.compact:  # self._local_address(io.address, node), inline
                size, copy_run = self.placement_bytes, self.copy_run
                region, offset = divmod(io.address, size)
                run, j = divmod(region // n, copy_run)
                io.address = ((run * self.replicas + (node - region) % n) * copy_run + j) * size + offset
            return nodes[node].submit(io)
        targets = self._targets(io)
        self.node_ios += len(targets)
        # a write: a member IO on each copy's node, complete when all are (join_all without the list)
        done = Signal.__new__(Signal)  # Signal(self.env), without its __init__ call
        done.env, done.callbacks = self.env, []
        all_done = AllOf(done, len(targets), io)
        nodes = self.nodes
        if self.compact:  # self._local_address(io.address, k) for each copy, inline: one region for all
            n, size, copy_run = len(nodes), self.placement_bytes, self.copy_run
            region, offset = divmod(io.address, size)
            run, j = divmod(region // n, copy_run)
            base = run * self.replicas
            for k in targets:
                address = ((base + (k - region) % n) * copy_run + j) * size + offset
                nodes[k].submit(io.child(address=address)).callbacks.append(all_done)
        else:
            for k in targets:
                nodes[k].submit(io.child()).callbacks.append(all_done)
        return done

    def stats(self, elapsed: float) -> dict[str, float]:
        return {"node_ios": float(self.node_ios)}
