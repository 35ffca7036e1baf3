"""Models another machine holds (``backend = "remote"``) do not count against max_loaded_models.

With the default of one loaded model, a session of a remote model must neither swap out the
local model nor wait for it; local models still swap as before.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from desktop_rt.engine.models.catalogue import ModelEntry, ModelsConfig
from desktop_rt.engine.models.kinds import kind_of
from desktop_rt.engine.models.router import ModelRouter, ModelState


@dataclass(eq=False)
class _Runtime:
    started: bool = False
    alive: bool = True

    async def start(self) -> None:
        self.started = True

    async def stop(self) -> None:
        self.started = False


def _router() -> tuple[ModelRouter, _Runtime]:
    entries = (
        ModelEntry("local", "whisper", model_path="/models/local"),
        ModelEntry("other", "whisper", model_path="/models/other"),
        ModelEntry("shared", "remote", options=(("url", "wss://gpu.example:8000/v1/realtime"),)),
    )
    primary = _Runtime(started=True)
    router = ModelRouter(
        ModelsConfig(entries, max_loaded_models=1, wait_timeout=2.0),
        lambda entry: _Runtime(),
        preloaded={"local": primary},
        default_model="local",
        holds_memory=lambda entry: kind_of(entry).holds_memory,
    )
    return router, primary


def test_kinds_say_whether_they_hold_this_machines_memory():
    assert kind_of(ModelEntry("a", "whisper", model_path="/m")).holds_memory
    assert not kind_of(
        ModelEntry("r", "remote", options=(("url", "ws://h/v1/realtime"),))
    ).holds_memory


async def test_a_remote_model_loads_beside_a_busy_local_model():
    router, primary = _router()
    local = await router.acquire("local")
    remote = await asyncio.wait_for(router.acquire("shared"), 1.0)  # no wait, no swap
    assert router.snapshot()["local"].state == ModelState.READY.value
    assert primary.started
    assert remote.slot.entry.id == "shared"
    local.release()
    remote.release()
    await router.close()


async def test_local_models_still_swap_with_a_remote_one_loaded():
    router, primary = _router()
    remote = await router.acquire("shared")
    other = await asyncio.wait_for(router.acquire("other"), 1.0)  # swaps the idle local out
    assert not primary.started
    assert other.slot.entry.id == "other"
    other.release()
    remote.release()
    await router.close()
