"""Composing components: stages in series, and fork/join for mirrors and stripes.

- :class:`Path` sends an IO through its stages one after another (host link, then appliance, then
  array, ...); it completes when the last stage does.
- :func:`join_all` / :func:`join_first` merge the completion events of an IO's parts: a mirrored write
  completes when *all* copies are written, a read from a mirror when the *first* copy returns.
- :class:`Mirror` forks writes to every member and reads to one (or all, first wins).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from storagelab.kernel.component import (
    NORMAL_PRIORITY,
    Component,
    DuplexStage,
    EventLike,
    Signal,
    entry,
    fire,
)
from storagelab.kernel.io import IORequest
from storagelab.kernel.stages import Link
from storagelab.kernel.station import Station


class AllOf:
    """Callback counting completed parts; succeeds ``event`` with ``value`` when the last one arrives."""

    __slots__ = ("event", "left", "value")

    def __init__(self, event: EventLike, n: int, value: object) -> None:
        self.event, self.left, self.value = event, n, value

    def __call__(self, _ev: EventLike) -> None:
        self.left -= 1
        if self.left == 0:  # fire(self.event, self.value), inline
            event = self.event
            event._ok, event._value = True, self.value
            callbacks, event.callbacks = event.callbacks, None  # type: ignore[assignment]  # processed: SimPy's own step() marks it so
            for callback in callbacks:
                callback(event)


class _FirstOf:
    """Callback that succeeds ``event`` with ``value`` on the first completed part and ignores the rest."""

    __slots__ = ("event", "value")

    def __init__(self, event: EventLike, value: object) -> None:
        self.event, self.value = event, value

    def __call__(self, _ev: EventLike) -> None:
        if not self.event.triggered:
            fire(self.event, self.value)


def join_all(env, parts: Sequence[EventLike], value: object) -> EventLike:
    """An event that fires (with ``value``) when every event in ``parts`` has fired."""
    if len(parts) == 1:
        return parts[0] if parts[0]._value is value else _relay(env, parts[0], value)
    done = Signal(env)
    cb = AllOf(done, len(parts), value)
    for p in parts:
        p.callbacks.append(cb)
    return done


def join_first(env, parts: Sequence[EventLike], value: object) -> EventLike:
    """An event that fires (with ``value``) when the first event in ``parts`` fires."""
    done = Signal(env)
    cb = _FirstOf(done, value)
    for p in parts:
        p.callbacks.append(cb)
    return done


def _relay(env, part: EventLike, value: object) -> EventLike:
    done = Signal(env)
    part.callbacks.append(lambda _e: fire(done, value))
    return done


class _PathIO(Signal):
    """An IO on its way along a path: the event that fires (value: the IO) when the path has completed it,
    and what moves it to the next stage, then back through the stages that respond. One object is both,
    so that a path costs an IO one object and no ``__init__`` call.

    It moves on when its stage completes: as a callback of the stage's event, or, where the stage gave its
    completion time instead (:func:`~storagelab.kernel.component.entry`: a FIFO station on its fast path,
    a link, a delay, a RAID set served by one such member), woken by the kernel's loop at that time, in the
    event queue as the stage's event would have been (the same time, priority and place in the order): no
    event is made for that stage. Its callbacks (what waits for the path) run once, when it fires; it is
    never scheduled to fire, so it cannot be triggered from outside (:meth:`succeed`, :meth:`fail`)."""

    path: Path
    io: IORequest
    i: int  # the stage it is at (an index into the path's steps)
    back: int  # the response legs still to cross

    def __call__(self, _ev: EventLike) -> None:
        path = self.path
        if self.i < path.last_step:  # forward: the next stage
            self.i += 1
            done = path.steps[self.i](self.io)
        elif self.back:  # then the responses, from the stage nearest the back end to the nearest the host
            self.back -= 1
            done = path.responders[self.back](self.io)
        else:  # fire(self, self.io), inline: once per path an IO takes
            self._ok, self._value = True, self.io
            callbacks, self.callbacks = self.callbacks, None  # type: ignore[assignment]  # processed: SimPy's own step() marks it so
            for callback in callbacks:
                callback(self)
            return
        if isinstance(done, float):  # the stage's completion time: woken then, in its event's place
            env = path.env
            env._queue.push(done, NORMAL_PRIORITY, self)
        else:
            done.callbacks.append(self)

    def succeed(self, value: Any = None) -> Signal:
        raise RuntimeError("a path's event fires when the IO has crossed its stages; it cannot be triggered")

    def fail(self, exception: BaseException) -> Signal:
        raise RuntimeError("a path's event fires when the IO has crossed its stages; it cannot be triggered")


def _entry(stage: Component) -> Callable[[IORequest], EventLike]:
    """What a path calls to send an IO into ``stage`` when the loop cannot wake it: a link's ``forward``, a
    station's ``accept`` (what its ``submit`` calls, a call fewer per IO, unless a subclass overrides
    ``submit``), else ``submit``."""
    if isinstance(stage, Station) and type(stage).submit is Station.submit:
        return stage.accept
    return getattr(stage, "forward", stage.submit)


def _timed_entry(stage: Component) -> Callable[[IORequest], EventLike | float]:
    """What a path calls to send an IO into ``stage`` when the loop wakes it at a completion time: a link's
    ``request_time`` (unless a subclass overrides ``forward``), another stage's ``forward``, else
    :func:`~storagelab.kernel.component.entry`."""
    if isinstance(stage, Link) and type(stage).forward is Link.forward:
        return stage.request_time
    forward = getattr(stage, "forward", None)
    return forward if forward is not None else entry(stage)


def _timed_responder(stage: Component) -> Callable[[IORequest], EventLike | float]:
    """A link's ``response_time`` (unless a subclass overrides ``respond``), else its ``respond``."""
    if isinstance(stage, Link) and type(stage).respond is Link.respond:
        return stage.response_time
    return cast(DuplexStage, stage).respond


class Path(Component):
    """Stages in series: an IO passes each in turn; the path completes when the last stage completes and
    every stage that carries a response back (a :class:`~storagelab.kernel.Link`: a read's data, a
    write's acknowledgement) has carried it, nearest the back end first."""

    def __init__(self, name: str, stages: Sequence[Component]) -> None:
        super().__init__(name)
        if not stages:
            raise ValueError(f"path {name!r} needs at least one stage")
        self.stages = list(stages)

    def children(self) -> list[Component]:
        return self.stages

    def on_bind(self) -> None:
        # what the IO calls on each stage going in, and the response legs coming back (in path order);
        # taken once the stages are bound, as a station picks its submit method then; where the loop wakes
        # a path's IO at a time (the kernel's, simulate()'s), the stages that know it give it
        duplex = [s for s in self.stages if getattr(s, "duplex", False)]
        self.steps: list[Callable[[IORequest], EventLike | float]]
        if getattr(self.env, "wakes_paths", False):
            self.steps = [_timed_entry(s) for s in self.stages]
            self.responders = [_timed_responder(s) for s in duplex]
        else:
            self.steps = [_entry(s) for s in self.stages]
            self.responders = [cast(DuplexStage, s).respond for s in duplex]
        self.last_step, self.n_responders = len(self.steps) - 1, len(self.responders)
        self.passthrough = self.last_step == 0 and not self.responders  # one stage: the path adds nothing

    def submit(self, io: IORequest) -> EventLike:
        if self.passthrough:
            return self.stages[0].submit(io)
        done = _PathIO.__new__(_PathIO)  # no __init__ call: a path per IO and copy
        done.env, done.callbacks, done.path, done.io = self.env, [], self, io
        done.i, done.back = 0, self.n_responders
        first = self.steps[0](io)
        if isinstance(first, float):  # woken at the first stage's completion time
            env = self.env
            env._queue.push(first, NORMAL_PRIORITY, done)
        else:
            first.callbacks.append(done)
        return done


class Mirror(Component):
    """Copies kept on every member: writes go to all members (complete when all have), reads to one.

    ``read_policy``: ``"round-robin"`` (alternate members), ``"random"``, or ``"first"`` (send the read
    to every member and complete on the first reply).
    """

    READ_POLICIES = ("round-robin", "random", "first")

    def __init__(self, name: str, members: Sequence[Component], read_policy: str = "round-robin") -> None:
        super().__init__(name)
        if len(members) < 2:
            raise ValueError(f"mirror {name!r} needs at least 2 members, got {len(members)}")
        if read_policy not in self.READ_POLICIES:
            raise ValueError(
                f"mirror {name!r}: read_policy must be one of {self.READ_POLICIES}, got {read_policy!r}"
            )
        self.members = list(members)
        self.read_policy = read_policy
        self._next = 0
        self.reset_stats()

    def children(self) -> list[Component]:
        return self.members

    def reset_stats(self) -> None:
        self.member_ios = 0

    def submit(self, io: IORequest) -> EventLike:
        members = self.members
        if io.is_read and self.read_policy != "first":
            if self.read_policy == "round-robin":
                self._next = (self._next + 1) % len(members)
                m = members[self._next]
            else:
                m = members[int(self.rng.integers(len(members)))]
            self.member_ios += 1
            return m.submit(io)
        parts = [m.submit(io.child()) for m in members]
        self.member_ios += len(parts)
        return (join_first if io.is_read else join_all)(self.env, parts, io)

    def stats(self, elapsed: float) -> dict[str, float]:
        return {"member_ios": float(self.member_ios)}
