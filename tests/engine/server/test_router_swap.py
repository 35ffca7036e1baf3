"""A client that leaves during a model swap, over real websockets with real Whisper models.

The server holds the embedded model (``whisper-base``, loaded) and ``second`` (the same weights
from their folder), with room for one loaded model: asking for ``second`` swaps ``whisper-base``
out. The client leaves at each step of that swap (at once, while ``whisper-base`` stops, while
``second`` loads, once it is served); the router must go on serving later clients. Steps are
held open by gates on the runtime's ``start``/``stop`` that the test opens once the client left.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from desktop_rt.engine.models.catalogue import EMBEDDED_ENTRY, ModelEntry, ModelsConfig
from desktop_rt.engine.models.runtimes import InProcessRuntime
from desktop_rt.engine.server.server import RealtimeServer, ServerConfig
from tests.support.clips import read_clip, reference_text
from tests.support.rt_client import check_item_order, open_client, wer

SECOND = "second"
SERVED_WITHIN = 60.0
"""Seconds a later client may wait for its session (a load of whisper base takes about 1 s)."""
TRANSITIONAL = ("loading", "stopping")


def two_models(folder, **settings) -> ModelsConfig:
    second = ModelEntry(SECOND, "whisper", model_path=str(folder))
    return ModelsConfig((EMBEDDED_ENTRY, second), max_loaded_models=1, **settings)


@contextlib.asynccontextmanager
async def running(backend, config: ModelsConfig):
    server = RealtimeServer(ServerConfig(port=0, models=config), backend)
    await asyncio.to_thread(server.start)
    try:
        yield server
    finally:
        await asyncio.to_thread(server.stop, 30.0)


async def until_state(server, predicate, timeout: float = SERVED_WITHIN) -> dict:
    assert await asyncio.to_thread(server.router.wait_for, predicate, timeout), (
        server.router.snapshot()
    )
    return server.router.snapshot()


def settled(status: dict) -> bool:
    return not any(s.state in TRANSITIONAL or s.waiting or s.admitted for s in status.values())


def gate(monkeypatch, method: str) -> threading.Event:
    """Hold every ``InProcessRuntime.<method>`` until the returned event is set."""
    opened = threading.Event()
    original = getattr(InProcessRuntime, method)

    async def gated(self: InProcessRuntime) -> None:
        await asyncio.to_thread(opened.wait, SERVED_WITHIN)
        await original(self)

    monkeypatch.setattr(InProcessRuntime, method, gated)
    return opened


async def transcribe(url: str, name: str) -> str:
    """One clip at 24 kHz and a final commit on a new connection; its transcript."""
    client = await asyncio.wait_for(open_client(url), SERVED_WITHIN)
    await client.configure(rate=24_000, language="en")
    await client.append_clip(read_clip(name))
    await client.send({"type": "input_audio_buffer.commit", "final": True})
    assert await client.drain_to_close() == 1000
    check_item_order(client.events)
    return "".join(client.transcripts())


async def leave(server, step: str, opened: threading.Event | None) -> None:
    """Ask for ``second``, then close at ``step`` of the swap; then let the swap go on."""
    ws = await connect(f"{server.url}?model={SECOND}&intent=transcription")
    if step == "while whisper-base stops":
        await until_state(server, lambda s: s["whisper-base"].state == "stopping")
    elif step == "while second loads":
        await until_state(server, lambda s: s[SECOND].state == "loading")
    elif step == "once served":
        created = json.loads(await asyncio.wait_for(ws.recv(), SERVED_WITHIN))
        assert created["type"] == "session.created", created
    await ws.close()
    await until_state(server, lambda s: s[SECOND].admitted == 0)  # the server saw it leave
    if opened is not None:
        opened.set()


GATED = {"while whisper-base stops": "stop", "while second loads": "start"}


@pytest.mark.parametrize(
    "step", ["at once", "while whisper-base stops", "while second loads", "once served"]
)
async def test_a_client_leaving_during_a_swap_leaves_the_router_serving(
    step, whisper_backend, default_model_dir, monkeypatch
):
    opened = gate(monkeypatch, GATED[step]) if step in GATED else None
    async with running(whisper_backend, two_models(default_model_dir)) as server:
        await leave(server, step, opened)
        status = await until_state(server, settled)
        if step != "at once":  # the swap it asked for was completed without it
            assert status[SECOND].state == "ready" and status[SECOND].sessions == 0, status
            assert status["whisper-base"].last_unload == f"swapped out for {SECOND}"
        # a later client (for the model swapped out) is served: a swap back, a transcript
        text = await transcribe(f"{server.url}?model=whisper-base", "ss-0880")
        assert wer(reference_text("ss-0880"), text) < 0.25, text
        assert settled(await until_state(server, settled))


async def test_a_client_that_cannot_be_served_in_time_gets_an_error_then_a_close(
    whisper_backend, default_model_dir
):
    config = two_models(default_model_dir, wait_timeout=0.5)
    async with running(whisper_backend, config) as server:
        pinned = await open_client(f"{server.url}?model=whisper-base")  # holds the only room
        async with connect(f"{server.url}?model={SECOND}") as ws:
            error = json.loads(await asyncio.wait_for(ws.recv(), SERVED_WITHIN))
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(ws.recv(), SERVED_WITHIN)
        assert error["type"] == "error" and error["error"]["code"] == "model_wait_timeout", error
        assert ws.close_code == 1013
        message = error["error"]["message"]
        assert "0.5 s" in message and "whisper-base" in message and "wait_timeout" in message
        status = server.router.snapshot()
        assert status[SECOND].state == "stopped" and status[SECOND].waiting == 0
        assert status["whisper-base"].state == "ready" and status["whisper-base"].sessions == 1
        await pinned.ws.close()
