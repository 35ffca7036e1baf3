"""A property test of the router: random connects, leaves, holds, unloads, deaths and ttl expiries.

Fake runtimes (loads and stops that take a while, fail, run past their bound or never end) sit
behind the router's public API, on an event loop whose clock is virtual: it jumps to the next
timer when nothing is ready, so minutes of ttl and timeouts pass in microseconds, and a state
where nothing is scheduled and nothing is ready (a wait that nothing bounds) raises at once.
Invariants: every lease request ends (served or an error) within ``wait_timeout``; at most
``max_loaded_models`` are loading or ready; once every client has gone no model is loading or
stopping, nothing waits, and exactly the ready models hold a started runtime (nothing leaked).
"""

from __future__ import annotations

import asyncio
import selectors
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop_rt.engine.models.bounded import STOP_TIMEOUT
from desktop_rt.engine.models.catalogue import ModelEntry, ModelsConfig
from desktop_rt.engine.models.router import (
    Lease,
    ModelLoadError,
    ModelRouter,
    ModelWaitTimeoutError,
)

MODELS = ("m0", "m1", "m2")
LOAD_TIMEOUT = 20.0
SLOW_LOAD = 2 * LOAD_TIMEOUT
"""A load that ends, but only after the router gave up on it."""
EPSILON = 1e-6
SETTLE = SLOW_LOAD + LOAD_TIMEOUT + 2 * STOP_TIMEOUT + 10.0
"""Virtual seconds after the last client within which every transitional state must end."""


class StuckError(AssertionError):
    """Nothing is scheduled and nothing can wake the loop: some wait has no bound."""


class LivelockError(AssertionError):
    """Tasks keep waking each other, so the clock (and every timeout) never moves."""


BUSY_TURNS = 100_000
"""Loop turns without a timer's wait; a scenario's busiest instant takes a few hundred."""


class _VirtualSelector:
    """A selector that never sleeps: with nothing ready it moves the clock to the next timer."""

    def __init__(self, clock: _Clock) -> None:
        self._selector = selectors.DefaultSelector()
        self._clock = clock
        self._busy_turns = 0

    def select(self, timeout: float | None = None) -> list:
        events = self._selector.select(0)
        if events or timeout == 0:
            self._busy_turns += 1
            if self._busy_turns > BUSY_TURNS:
                raise LivelockError(
                    f"{BUSY_TURNS} loop turns without the clock moving: tasks wake each other"
                )
            return events
        self._busy_turns = 0
        if timeout is None:
            raise StuckError("every task waits and no timer is set: a wait without a bound")
        self._clock.now += timeout
        return []

    def __getattr__(self, name: str):
        return getattr(self._selector, name)


@dataclass
class _Clock:
    now: float = 0.0


class VirtualClockLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        self._clock = _Clock()
        super().__init__(_VirtualSelector(self._clock))

    def time(self) -> float:
        return self._clock.now


# ---- fake runtimes ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Behaviour:
    load_s: float | None  # None: the load never ends
    fails: bool
    stop_s: float | None  # None: the stop never ends

    @property
    def serves(self) -> bool:
        return self.load_s is not None and self.load_s <= LOAD_TIMEOUT and not self.fails


async def _take(seconds: float | None) -> None:
    if seconds is None:
        await asyncio.Event().wait()  # the runtime's own unbounded wait: the router bounds it
    await asyncio.sleep(seconds)


@dataclass(eq=False)
class FakeRuntime:
    model: str
    behaviour: Behaviour
    started: bool = False
    stop_called: bool = False
    alive: bool = True

    async def start(self) -> None:
        await _take(self.behaviour.load_s)
        if self.behaviour.fails:
            raise ModelLoadError(f"{self.model} is broken")
        self.started = True

    async def stop(self) -> None:
        self.stop_called = True
        await _take(self.behaviour.stop_s)

    @property
    def holds_memory(self) -> bool:
        return self.started and not self.stop_called


# ---- the scenario ----------------------------------------------------------------------------


@dataclass
class World:
    router: ModelRouter
    behaviours: dict[str, Behaviour]
    runtimes: list[FakeRuntime] = field(default_factory=list)

    def check_loaded(self) -> None:
        states = [s.state for s in self.router.snapshot().values()]
        busy = sum(state in ("loading", "ready") for state in states)
        assert busy <= self.router.config.max_loaded_models, self.router.snapshot()

    async def client(self, name: str, leave_after: float | None, hold: float) -> Lease | None:
        """Ask for ``name``; leave after ``leave_after`` s unless answered; hold a lease ``hold`` s."""
        loop = asyncio.get_running_loop()
        bound = self.router.config.wait_timeout
        began = loop.time()
        task = asyncio.ensure_future(self.router.acquire(name))
        done, _ = await asyncio.wait(
            {task}, timeout=bound + 1 if leave_after is None else leave_after
        )
        if not done:
            assert leave_after is not None, f"no answer for {name} within {bound} s"
            task.cancel()
            await asyncio.wait({task})
            if not task.cancelled() and task.exception() is None:
                task.result().release()  # answered as it was left
            return None
        assert loop.time() - began <= bound + EPSILON, (name, loop.time() - began)
        error = task.exception()
        if error is not None:
            assert isinstance(error, (ModelWaitTimeoutError, ModelLoadError)), error
            return None
        lease = task.result()
        self.check_loaded()
        await asyncio.sleep(hold)
        lease.release()
        return lease

    def check_settled(self) -> None:
        status = self.router.snapshot()
        for model, s in status.items():
            assert s.state in ("ready", "stopped"), status
            assert s.waiting == 0 and s.sessions == 0, status
            holding = [r for r in self.runtimes if r.model == model and r.holds_memory]
            assert len(holding) == (1 if s.state == "ready" else 0), (model, status, holding)


def make_world(config: ModelsConfig, behaviours: dict[str, Behaviour]) -> World:
    def make(entry: ModelEntry) -> FakeRuntime:
        runtime = FakeRuntime(entry.id, behaviours[entry.id])
        world.runtimes.append(runtime)
        return runtime

    primary = FakeRuntime("m0", behaviours["m0"], started=True)  # the server's preloaded model
    router = ModelRouter(config, make, preloaded={"m0": primary}, default_model="m0")
    world = World(router, behaviours, [primary])
    return world


async def play(world: World, steps: list[tuple]) -> None:
    tasks: list[asyncio.Future] = []
    for kind, *args in steps:
        if kind == "connect":
            tasks.append(asyncio.ensure_future(world.client(*args)))
        elif kind == "unload":
            tasks.append(asyncio.ensure_future(world.router.unload(args[0])))
        elif kind == "die":
            for runtime in world.runtimes:
                if runtime.model == args[0] and runtime.holds_memory:
                    runtime.alive = False
        else:
            await asyncio.sleep(args[0])
        world.check_loaded()
    await asyncio.gather(*tasks)


async def serve_each(world: World) -> None:
    """After the storm, every model that can load is served, within a few bounded tries."""
    tries = int((SLOW_LOAD + STOP_TIMEOUT) / world.router.config.wait_timeout) + 3
    for model, behaviour in world.behaviours.items():
        for _ in range(tries):
            if await world.client(model, None, 0.0) is not None:
                break
        else:
            assert not behaviour.serves, f"{model} was never served: {world.router.snapshot()}"


async def scenario(config: ModelsConfig, behaviours: dict[str, Behaviour], steps: list) -> None:
    world = make_world(config, behaviours)
    await play(world, steps)
    await asyncio.sleep(SETTLE)
    world.check_settled()
    await serve_each(world)
    await asyncio.sleep(SETTLE)
    world.check_settled()
    await world.router.close()
    assert all(s.state == "stopped" for s in world.router.snapshot().values())
    assert not any(r.holds_memory for r in world.runtimes)


# ---- strategies ------------------------------------------------------------------------------

behaviours = st.builds(
    Behaviour,
    load_s=st.sampled_from([0.0, 0.5, 3.0, 3.0, SLOW_LOAD, None]),
    fails=st.sampled_from([False, False, False, True]),
    stop_s=st.sampled_from([0.0, 0.5, 3.0, 3.0, None]),
)


@st.composite
def worlds(draw: st.DrawFn) -> tuple[ModelsConfig, dict[str, Behaviour], list]:
    models = MODELS[: draw(st.integers(2, 3))]
    entries = tuple(
        ModelEntry(m, "whisper", model_path=f"/models/{m}", ttl=draw(st.sampled_from([0, 1, 4])))
        for m in models
    )
    config = ModelsConfig(
        entries,
        max_loaded_models=draw(st.integers(1, len(models) - 1)),
        wait_timeout=draw(st.sampled_from([2.0, 10.0, 30.0])),
        load_timeout=LOAD_TIMEOUT,
    )
    names = [*models, "whisper-1"]  # an alias of m0, the default model
    step = st.one_of(
        st.tuples(
            st.just("connect"),
            st.sampled_from(names),
            st.sampled_from([None, None, 0.0, 0.2, 1.0, 5.0]),
            st.sampled_from([0.0, 0.5, 2.0, 20.0]),
        ),
        st.tuples(st.just("advance"), st.sampled_from([0.0, 0.1, 1.0, 5.0, 30.0])),
        st.tuples(st.just("unload"), st.sampled_from([None, *models])),
        st.tuples(st.just("die"), st.sampled_from(models)),
    )
    steps = draw(st.lists(step, min_size=1, max_size=25))
    return config, {m: draw(behaviours) for m in models}, steps


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_every_request_ends_in_its_bound_and_nothing_is_left_half_done(world):
    config, behaviour_of, steps = world
    with asyncio.Runner(loop_factory=VirtualClockLoop) as runner:
        runner.run(scenario(config, behaviour_of, steps))


def test_the_virtual_loop_reports_a_wait_without_a_bound():
    async def forever() -> None:
        await asyncio.Event().wait()

    with asyncio.Runner(loop_factory=VirtualClockLoop) as runner, pytest.raises(StuckError):
        runner.run(forever())


def test_the_virtual_loop_moves_its_clock_to_the_next_timer():
    async def nap() -> float:
        loop = asyncio.get_running_loop()
        began = loop.time()
        await asyncio.sleep(3600)
        return loop.time() - began

    with asyncio.Runner(loop_factory=VirtualClockLoop) as runner:
        assert runner.run(nap()) == pytest.approx(3600)


def test_a_model_loaded_for_waiting_sessions_is_not_swapped_out_before_they_take_it():
    """Hypothesis's counterexample: one place, loads and stops that take no time, sessions for
    both models at once. Each load's waiters were overtaken by the other model's, which swapped
    it out again before they ran, forever; the clock never moved."""
    instant = Behaviour(load_s=0.0, fails=False, stop_s=0.0)
    entries = tuple(ModelEntry(m, "whisper", model_path=f"/models/{m}") for m in MODELS[:2])
    config = ModelsConfig(entries, max_loaded_models=1, wait_timeout=2.0, load_timeout=LOAD_TIMEOUT)
    steps = [
        *[("advance", 0.0)] * 2,
        ("connect", "m0", None, 0.0),
        *[("advance", 0.0)] * 7,
        ("connect", "m1", None, 0.0),
        ("connect", "m0", None, 0.0),
        ("connect", "m0", None, 0.0),
        *[("advance", 0.0)] * 4,
        ("advance", 1.0),
        ("advance", 30.0),
        ("unload", "m0"),
    ]
    with asyncio.Runner(loop_factory=VirtualClockLoop) as runner:
        runner.run(scenario(config, {"m0": instant, "m1": instant}, steps))
