"""The component interface every stage of a simulated IO path implements, and the run context.

A component *accepts an IO and returns an event that fires when the IO completes* (its value is
the IO): a :class:`Signal`, the kernel's own event, or any SimPy event (a component may use a process).
Everything composes through that one method: paths in series, fork/join for mirrors and stripes, caches in
front of back ends, schedulers in front of devices. A stage may also say, as an IO arrives, when it will
complete it (:func:`entry`), so that a path waits without an event.

Components are built from plain parameters and bound to a run by :meth:`Component.bind`, which gives
them the run's environment (:class:`~storagelab.kernel.Environment`, SimPy's API), their own random stream
(named after the component) and the recorder.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeAlias, cast

import numpy as np
import simpy.events
from mypy_extensions import mypyc_attr
from simpy.events import Condition

from storagelab.kernel.io import IORequest
from storagelab.kernel.randomness import RandomStreams

if TYPE_CHECKING:
    from storagelab.kernel.event_loop import Environment
    from storagelab.kernel.metrics import LatencyRecorder

#: The statistic a component reports (> 0) when a run drove it outside the range it is valid for (a
#: published curve past its last published point): a headroom search then stops there
#: (:func:`storagelab.analysis.headroom.headroom`).
BEYOND_RANGE = "beyond_published_range"

#: What a component's ``submit`` returns and a callback receives: a :class:`Signal` or a SimPy event
#: (``Any`` to the type checker, so that the compiled per-IO modules, :mod:`storagelab.kernel.native`, check
#: nothing about it at run time).
EventLike: TypeAlias = Any

# What the per-IO code uses from heapq and SimPy, as constants: compiled (storagelab.kernel.native), a name
# imported from a module that is not compiled is looked up in a dictionary at every use, a Final one is not
# (and a Final int is inlined).
#: SimPy's priority of an ordinary event (``simpy.events.NORMAL``) and of an urgent one (``URGENT``)
NORMAL_PRIORITY: Final = 1
URGENT_PRIORITY: Final = 0
#: SimPy's value of an event not yet triggered (``simpy.events.PENDING``)
PENDING: Final = simpy.events.PENDING
heappush: Final = heapq.heappush
heappop: Final = heapq.heappop
heapreplace: Final = heapq.heapreplace
assert NORMAL_PRIORITY == simpy.events.NORMAL and URGENT_PRIORITY == simpy.events.URGENT


class Signal:
    """The kernel's event: what a component returns for an IO, with SimPy's ``Event`` attributes and
    protocol, so that SimPy's loop, processes (``yield``) and conditions (``env.all_of``, ``&``, ``|``)
    take it as one of theirs.

    The kernel makes one or more per IO and stage, written ``Signal.__new__(Signal)`` with its four
    attributes set where it is made (run pure Python, no ``__init__`` call; compiled, the native constructor
    runs, hence ``env``'s default); ``Signal(env)`` is a pending one. It is a class
    of the kernel's rather than SimPy's ``Event`` so that the compiled per-IO modules hold it as a native
    object (fixed fields, no ``__dict__``); run pure Python, it is the same as an ``Event``.
    """

    _value: Any = PENDING  # until it is triggered (made by __new__, as SimPy's Event has it too)

    def __init__(self, env: Any = None) -> None:
        self.env: Any = env
        self.callbacks: Any = []  # a list of callables until processed, then None
        self._value = PENDING
        self._ok: bool = False
        self._defused: bool  # set (True) only when a failure is handled, as SimPy's attribute

    def __repr__(self) -> str:
        return f"<Signal() object at {id(self):#x}>"

    def __call__(self, _ev: Any) -> None:
        # a subclass is a callback (a path's IO); compiled, a native base class must have the slot too
        raise TypeError(f"{self} is an event, not a callback")

    @property
    def triggered(self) -> bool:
        """Whether it has a value (it is scheduled, or processed)."""
        return self._value is not PENDING

    @property
    def processed(self) -> bool:
        """Whether its callbacks have run."""
        return self.callbacks is None

    @property
    def ok(self) -> bool:
        """Whether it succeeded."""
        return self._ok

    @property
    def defused(self) -> bool:
        """Whether its failure was handled."""
        return getattr(self, "_defused", False)

    @property
    def value(self) -> Any:
        """Its value (the IO); an error while it is pending."""
        if self._value is PENDING:
            raise AttributeError(f"value of {self} is not yet available")
        return self._value

    def succeed(self, value: Any = None) -> Signal:
        """Set its value and schedule it now, as ``Event.succeed`` does."""
        if self._value is not PENDING:
            raise RuntimeError(f"{self} has already been triggered")
        self._ok = True
        self._value = value
        self.env.schedule(self)
        return self

    def fail(self, exception: BaseException) -> Signal:
        """Fail it with ``exception`` and schedule it now, as ``Event.fail`` does."""
        if self._value is not PENDING:
            raise RuntimeError(f"{self} has already been triggered")
        if not isinstance(exception, BaseException):
            raise TypeError(f"{exception} is not an exception.")
        self._ok = False
        self._value = exception
        self.env.schedule(self)
        return self

    def __and__(self, other: Any) -> Condition:
        events: list[Any] = [self, other]
        return Condition(self.env, Condition.all_events, events)

    def __or__(self, other: Any) -> Condition:
        events: list[Any] = [self, other]
        return Condition(self.env, Condition.any_events, events)


@dataclass
class RunContext:
    """What a bound component may use: the event loop, random streams and the measurement recorder."""

    env: Any  # the run's Environment (storagelab.kernel.event_loop; Any here: compiled, a dataclass field's
    # type is resolved as the module is imported, before the event loop's module is)
    streams: RandomStreams
    recorder: LatencyRecorder | None = None
    components: dict[str, Component] = field(default_factory=dict)


def _check_environment(ctx: RunContext, who: str) -> None:
    """That ``ctx``'s environment is the kernel's (compiled, a component holds it as that type)."""
    from storagelab.kernel.event_loop import Environment  # here: the event loop's module imports this one

    if not isinstance(ctx.env, Environment):
        raise TypeError(
            f"{who}: a run's environment must be storagelab.kernel.Environment (SimPy's API, the kernel's "
            f"class), got {type(ctx.env).__module__}.{type(ctx.env).__name__}"
        )


def completion_in(env: Environment, delay: float, value: Any) -> Signal:
    """A triggered event that fires ``delay`` seconds from now with ``value``.

    Equivalent to ``env.timeout(delay, value)`` without the argument checks: this is the kernel's
    hot path (one call per IO per stage).
    """
    ev = Signal.__new__(Signal)
    ev.env = env
    ev.callbacks = []
    ev._value = value
    ev._ok = True
    env._queue.push(env._now + delay, NORMAL_PRIORITY, ev)
    return ev


def completion_at(env: Environment, when: float, value: Any) -> Signal:
    """A triggered event that fires at simulated time ``when`` (s, not before now) with ``value``.

    For a component that knows an IO's completion time at arrival (from the ``submit_timed`` of a FIFO
    station on its fast path): one event at that exact time, where ``completion_in(env, when - now)``
    would compute ``now + (when - now)``, which may differ from ``when`` in its last bit.
    """
    ev = Signal.__new__(Signal)
    ev.env = env
    ev.callbacks = []
    ev._value = value
    ev._ok = True
    env._queue.push(when, NORMAL_PRIORITY, ev)
    return ev


def fire(event: EventLike, value: Any) -> None:
    """Succeed ``event`` with ``value`` and run its callbacks now, inside the event being processed.

    The completion of a composite (a path's last stage, the last part of a join, a RAID set's last
    phase) happens at the same instant as the completion it follows, so it does not go round the event
    queue as ``event.succeed(value)`` would (an event scheduled for now, then popped): the callbacks are
    the same and run at the same simulated time, and a run costs an event less per composite.
    """
    event._ok = True
    event._value = value
    callbacks, event.callbacks = event.callbacks, None  # type: ignore[assignment]  # processed: SimPy's own step() marks it so
    for callback in callbacks:
        callback(event)


def fire_last(event: EventLike, value: Any) -> None:
    """Succeed ``event`` with ``value`` as ``event.succeed(value)`` would, from the *last* callback of the
    event being processed, as the last thing that callback does: inline (:func:`fire`) when no other event
    is due at this instant, else scheduled as ``succeed`` schedules it.

    ``succeed`` puts the event in the queue at the current time, after every event already due then; the
    loop pops it next when nothing else is due now (the queue's earliest time is later: the run's stop
    event is always there, at its end), having run the callbacks of the event being processed, of which
    this was the last. Running its callbacks inline then is the same order, one event fewer. When another
    event is due at this instant (scheduled by the caller, or a tie), the order matters, so it is queued.
    """
    env = event.env
    if env._queue.first() > env._now:
        fire(event, value)
    else:
        event.succeed(value)


def entry(stage: Component) -> Callable[[IORequest], Any]:
    """What a caller that wakes at a completion time calls to send an IO into ``stage`` (a
    :class:`~storagelab.kernel.Path` run by the kernel's loop): the function ``stage.timed_entry()`` returns,
    which gives the IO's completion time (s, a ``float``) where the stage knows it as the IO arrives (it then
    schedules nothing: the caller is woken at that time, the stage's event is not made) and its event
    otherwise; or ``stage.submit`` where the stage has no ``timed_entry``, or a subclass of the class that
    defines it overrides ``submit`` (the override is what the stage does)."""
    for cls in type(stage).__mro__:
        defined = vars(cls)
        if "timed_entry" in defined:
            return cast(Any, stage).timed_entry()
        if "submit" in defined:
            break
    return stage.submit


class TimedComponent(Protocol):
    """A component that can tell, as an IO arrives, when the IO will complete there (a FIFO station on its
    fast path, a cluster of such nodes), wherever its ``timed`` is true: ``submit_timed(io)`` accepts the
    IO and returns that time (s), scheduling nothing."""

    timed: bool

    def submit_timed(self, io: IORequest) -> float: ...


class DuplexStage(Protocol):
    """A stage that also carries each IO's response back (a :class:`~storagelab.kernel.Link`), where its
    ``duplex`` is true: in a :class:`~storagelab.kernel.Path` the request crosses at ``forward(io)`` and the
    response at ``respond(io)``, each returning the event of its crossing."""

    duplex: bool

    def forward(self, io: IORequest) -> EventLike: ...

    def respond(self, io: IORequest) -> EventLike: ...


@mypyc_attr(allow_interpreted_subclasses=True)
class Component:
    """A stage of the IO path. Subclasses implement :meth:`submit` and, if they hold state that
    summarises a run, :meth:`stats`.

    ``name`` identifies the component in results and names its random stream, so it must be unique in
    a topology.
    """

    def __init__(self, name: str) -> None:
        if not name or not isinstance(name, str):
            raise ValueError(f"a component needs a non-empty name, got {name!r}")
        self.name = name
        self.ctx: RunContext | None = None

    # -- binding -----------------------------------------------------------------------------------
    def children(self) -> list[Component]:
        """Components this one submits IOs to (bound with it)."""
        return []

    def bind(self, ctx: RunContext) -> None:
        """Attach to a run: environment, random stream, recorder; binds children first.

        A component holds per-run state (queues, head positions, statistics), so it belongs to one run:
        build a fresh topology for every ``simulate()`` call (a function that returns it is the usual way).
        """
        if self.ctx is not None:
            if self.ctx is ctx:
                return
            raise ValueError(
                f"component {self.name!r} already belongs to another run; build a fresh topology for each "
                "simulate() call (e.g. a function that returns it)"
            )
        if self.name in ctx.components and ctx.components[self.name] is not self:
            raise ValueError(f"two components are named {self.name!r}; component names must be unique")
        _check_environment(ctx, f"component {self.name!r}")
        ctx.components[self.name] = self
        for child in self.children():
            child.bind(ctx)
        self.ctx = ctx
        self.env: Environment = ctx.env
        self.rng: np.random.Generator = ctx.streams.stream(self.name)
        self.on_bind()

    def on_bind(self) -> None:
        """Hook for subclasses: set up per-run state once env and rng exist."""

    # -- the interface -----------------------------------------------------------------------------
    def submit(self, io: IORequest) -> EventLike:
        """Accept ``io``; return an event that fires (value ``io``) when this stage has completed it."""
        raise NotImplementedError

    def stats(self, elapsed: float) -> dict[str, float]:
        """Per-run statistics of this component over ``elapsed`` measured seconds (utilisation, hits, ...)."""
        return {}

    def reset_stats(self) -> None:
        """Forget statistics gathered so far (called at the end of the warm-up)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"
