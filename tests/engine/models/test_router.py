"""Routing connections between models over real websockets, with real Whisper models.

Every server here serves the embedded model (the session's ``whisper_backend``, already loaded)
and ``base-copy``: the same weights from their folder as a second, separately loaded model.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from desktop_rt.engine.models.aliases import OPENAI_NAMES
from desktop_rt.engine.models.catalogue import EMBEDDED_ENTRY, ModelEntry, ModelsConfig
from desktop_rt.engine.server.connection import model_named_in
from desktop_rt.engine.server.server import RealtimeServer, ServerConfig
from tests.support.clips import read_clip, reference_text
from tests.support.rt_client import (
    COMPLETED,
    EVENT_TIMEOUT,
    check_item_order,
    chunks_b64,
    http_get,
    open_client,
    wer,
)

COPY = "base-copy"


def models(folder, *extra: ModelEntry, copy: dict | None = None, **limits) -> ModelsConfig:
    entries = (
        EMBEDDED_ENTRY,
        ModelEntry(COPY, "whisper", model_path=str(folder), **(copy or {})),
        *extra,
    )
    return ModelsConfig(entries, **limits)


@contextlib.asynccontextmanager
async def running(backend, config: ModelsConfig, **settings):
    server = RealtimeServer(ServerConfig(port=0, models=config, **settings), backend)
    await asyncio.to_thread(server.start)
    try:
        yield server
    finally:
        await asyncio.to_thread(server.stop)


async def until_state(server, predicate, timeout: float = EVENT_TIMEOUT) -> dict:
    assert await asyncio.to_thread(server.router.wait_for, predicate, timeout), (
        server.router.snapshot()
    )
    return server.router.snapshot()


async def refused(url: str, *events: dict, **connect_kwargs) -> tuple[dict, int]:
    """Connect, send ``events``: the server answers with one error event, then closes."""
    async with connect(url, **connect_kwargs) as ws:
        for event in events:
            await ws.send(json.dumps(event))
        error = json.loads(await asyncio.wait_for(ws.recv(), EVENT_TIMEOUT))
        with pytest.raises(ConnectionClosed):
            await asyncio.wait_for(ws.recv(), EVENT_TIMEOUT)
    assert error["type"] == "error", error
    return error["error"], ws.close_code


def update(session: dict, kind: str = "session.update") -> dict:
    return {"type": kind, "session": session}


NAMING = {
    "session.model": update({"type": "transcription", "model": COPY}),
    "session.audio.input.transcription.model": update(
        {
            "type": "transcription",
            "audio": {"input": {"transcription": {"model": COPY, "language": "en"}}},
        }
    ),
    "session.input_audio_transcription.model": update(
        {"input_audio_transcription": {"model": COPY}}, "transcription_session.update"
    ),
}


@pytest.fixture(scope="module")
def two_models(whisper_backend, default_model_dir, tmp_path_factory):
    broken = ModelEntry(
        "broken", "whisper", model_path=str(tmp_path_factory.mktemp("empty") / "no-model")
    )
    config = models(default_model_dir, broken, max_loaded_models=3)
    with RealtimeServer(
        ServerConfig(port=0, models=config, model_name_timeout=20.0), whisper_backend
    ) as server:
        yield server


# ---- pure ------------------------------------------------------------------------------------


def test_the_model_is_read_from_the_three_session_paths_in_order():
    for path, event in NAMING.items():
        assert model_named_in(json.dumps(event)) == (True, COPY), path
    both = update(
        {
            "model": "first",
            "audio": {"input": {"transcription": {"model": "second"}}},
            "input_audio_transcription": {"model": "third"},
        }
    )
    assert model_named_in(json.dumps(both)) == (True, "first")
    assert model_named_in(
        json.dumps(
            update(
                {
                    "audio": {"input": {"transcription": {"model": "second"}}},
                    "input_audio_transcription": {"model": "third"},
                }
            )
        )
    ) == (True, "second")
    assert model_named_in(json.dumps(update({"type": "transcription"}))) == (True, None)
    assert model_named_in(json.dumps(update({"model": ""}))) == (True, None)
    assert model_named_in('{"type": "input_audio_buffer.append", "audio": "AAAA"}') == (False, None)
    assert model_named_in("{not json update") == (False, None)
    assert model_named_in(b'{"type": "session.update"}') == (False, None)


def test_the_default_time_to_name_a_model_is_30_s():
    assert ServerConfig().model_name_timeout == 30.0


# ---- choosing the model ----------------------------------------------------------------------


def test_models_and_health_list_every_model(two_models):
    status, body = http_get(f"{two_models.http_url}/v1/models")
    ids = [m["id"] for m in body["data"]]
    assert status == 200 and ids == ["whisper-base", COPY, "broken", *OPENAI_NAMES]  # aliases last
    status, health = http_get(f"{two_models.http_url}/health")
    states = {m["id"]: m["state"] for m in health["models"]}
    assert states["whisper-base"] == "ready" and states["broken"] == "stopped"


async def test_the_model_from_the_url(two_models):
    client = await open_client(two_models.url + f"?intent=transcription&model={COPY}")
    assert client.events[0]["session"]["audio"]["input"]["transcription"]["model"] == COPY
    status = two_models.router.snapshot()[COPY]
    assert status.state == "ready" and status.sessions == 1
    plain = await open_client(two_models.url + "?model=whisper-base")
    assert plain.events[0]["session"]["audio"]["input"]["transcription"]["model"] == "whisper-base"
    await client.ws.close()
    await plain.ws.close()
    await until_state(
        two_models, lambda s: s[COPY].sessions == 0 and s["whisper-base"].sessions == 0
    )


@pytest.mark.parametrize("path", list(NAMING))
async def test_the_model_from_the_first_session_update(two_models, path):
    async with connect(two_models.url + "?intent=transcription") as ws:
        await ws.send(
            json.dumps({"type": "input_audio_buffer.commit", "event_id": "early"})
        )  # before naming
        await ws.send(json.dumps(NAMING[path]))
        events = [json.loads(await asyncio.wait_for(ws.recv(), EVENT_TIMEOUT)) for _ in range(3)]
    assert [e["type"] for e in events] == ["session.created", "error", "session.updated"]
    assert events[0]["session"]["audio"]["input"]["transcription"]["model"] == COPY
    assert (
        events[1]["error"]["code"] == "input_audio_buffer_commit_empty"
        and events[1]["error"]["event_id"] == "early"
    )
    assert events[2]["session"]["audio"]["input"]["transcription"]["model"] == COPY


async def test_a_later_update_does_not_change_the_model(two_models):
    client = await open_client(two_models.url + "?model=whisper-base")
    await client.send(update({"type": "transcription", "model": COPY}))
    updated = await client.until("session.updated")
    assert updated["session"]["audio"]["input"]["transcription"]["model"] == "whisper-base"
    await client.ws.close()


@pytest.mark.slow
async def test_speech_sent_before_the_model_loaded_is_transcribed_in_order(two_models):
    await asyncio.to_thread(two_models.unload_model, COPY)  # so this connection waits for a load
    clip = read_clip("ss-0880")
    async with connect(two_models.url, max_size=None) as ws:
        await ws.send(
            json.dumps(
                update(
                    {
                        "type": "transcription",
                        "audio": {
                            "input": {
                                "format": {"type": "audio/pcm", "rate": 24_000},
                                "transcription": {"model": COPY, "language": "en"},
                            }
                        },
                    }
                )
            )
        )
        for chunk in chunks_b64(clip, 24_000):
            await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": chunk}))
        await ws.send(json.dumps({"type": "input_audio_buffer.commit", "final": True}))
        events = []
        with pytest.raises(ConnectionClosed):
            while True:
                events.append(json.loads(await asyncio.wait_for(ws.recv(), EVENT_TIMEOUT)))
    assert ws.close_code == 1000
    assert [e["type"] for e in events[:3]] == [
        "session.created",
        "session.updated",
        "input_audio_buffer.committed",
    ]
    check_item_order(events)
    (done,) = [e for e in events if e["type"] == COMPLETED]
    assert wer(reference_text("ss-0880"), done["transcript"]) < 0.25, done
    assert two_models.router.snapshot()[COPY].loads >= 2


async def test_no_model_named_in_time_gets_an_error_then_a_close(
    whisper_backend, default_model_dir
):
    async with running(
        whisper_backend, models(default_model_dir), model_name_timeout=0.3
    ) as server:
        error, code = await refused(server.url + "?intent=transcription")
    assert error["code"] == "model_required" and code == 1008
    assert error["message"].startswith("no model: name it in the session.update event")
    assert "0.3 s" in error["message"] and "whisper-base, base-copy" in error["message"]


async def test_a_first_update_naming_no_model_is_refused(two_models):
    error, code = await refused(
        two_models.url,
        {"type": "input_audio_buffer.clear"},
        update({"type": "transcription", "audio": {"input": {"format": {"rate": 16000}}}}),
    )
    assert error["code"] == "model_required" and code == 1008
    assert error["message"].startswith("no model: name it in the session.update event")


async def test_an_unknown_model_is_refused_from_the_url_and_from_an_update(two_models):
    error, code = await refused(two_models.url + "?model=gpt-5-transcribe")
    assert error["code"] == "model_not_found" and code == 1008
    assert (
        "gpt-5-transcribe" in error["message"]
        and "whisper-base, base-copy, broken" in error["message"]
    )
    error, _ = await refused(two_models.url, update({"type": "transcription", "model": "nope"}))
    assert error["code"] == "model_not_found" and "'nope' (from session.update)" in error["message"]


async def test_a_model_that_fails_to_load_is_an_error_then_a_close(two_models):
    error, code = await refused(two_models.url + "?model=broken")
    assert error["code"] == "model_load_failed" and error["type"] == "server_error" and code == 1011
    assert "no-model" in error["message"] and "desktop-rt models list" in error["message"]
    status = two_models.router.snapshot()["broken"]
    assert status.state == "stopped" and status.last_unload == "failed to load"


async def test_with_one_model_it_is_used_when_none_is_named(whisper_backend):
    async with running(whisper_backend, ModelsConfig()) as server:
        client = await open_client(server.url + "?intent=transcription")
        assert (
            client.events[0]["session"]["audio"]["input"]["transcription"]["model"]
            == "whisper-base"
        )
        await client.ws.close()


async def test_a_local_session_can_use_another_model(two_models):
    events: asyncio.Queue = asyncio.Queue()
    loop = asyncio.get_running_loop()
    local = two_models.open_local_session(
        lambda e: loop.call_soon_threadsafe(events.put_nowait, e), model=COPY
    )
    local.update(
        {"type": "transcription", "audio": {"input": {"transcription": {"language": "en"}}}}
    )
    created = await asyncio.wait_for(events.get(), EVENT_TIMEOUT)
    updated = await asyncio.wait_for(events.get(), EVENT_TIMEOUT)
    assert (created.type, updated.type) == ("session.created", "session.updated")
    assert updated.session.model == COPY and updated.session.language == "en"
    local.close()
    await until_state(two_models, lambda s: s[COPY].sessions == 0)


# ---- lifecycle -------------------------------------------------------------------------------


async def test_a_swap_waits_for_the_pinned_session_to_close(whisper_backend, default_model_dir):
    async with running(whisper_backend, models(default_model_dir, max_loaded_models=1)) as server:
        pinned = await open_client(server.url + "?model=whisper-base")
        async with connect(server.url + f"?model={COPY}") as waiting:
            await until_state(server, lambda s: s[COPY].waiting == 1)
            status = server.router.snapshot()
            assert status["whisper-base"].state == "ready" and status["whisper-base"].sessions == 1
            assert status[COPY].state == "stopped"
            await pinned.ws.close()  # the swap may go on now
            created = json.loads(await asyncio.wait_for(waiting.recv(), EVENT_TIMEOUT))
            assert created["type"] == "session.created"
            assert created["session"]["audio"]["input"]["transcription"]["model"] == COPY
            status = server.router.snapshot()
            assert status["whisper-base"].state == "stopped" and status[COPY].state == "ready"
            assert status["whisper-base"].last_unload == f"swapped out for {COPY}"


async def test_ttl_unloads_after_the_last_session_closed(whisper_backend, default_model_dir):
    config = models(default_model_dir, copy={"ttl": 0.2}, max_loaded_models=2)
    async with running(whisper_backend, config) as server:
        first = await open_client(server.url + f"?model={COPY}")
        second = await open_client(server.url + f"?model={COPY}")
        await first.ws.close()
        await until_state(server, lambda s: s[COPY].sessions == 1)
        # one session is still open: no unload is scheduled, however long that lasts
        assert second.events[0]["type"] == "session.created"
        assert (await second.configure(rate=16_000))["type"] == "session.updated"
        status = server.router.snapshot()[COPY]
        assert status.state == "ready" and status.unload_at is None
        await second.ws.close()
        status = await until_state(server, lambda s: s[COPY].state == "stopped")
        assert (
            status[COPY].last_unload == "unloaded after its ttl of 0.2 s"
            and status[COPY].loads == 1
        )
        assert status["whisper-base"].state == "ready"  # no ttl: it stays


async def test_concurrency_limits_refuse_at_the_handshake_with_429(
    whisper_backend, default_model_dir
):
    config = ModelsConfig(
        (
            dataclasses.replace(EMBEDDED_ENTRY, concurrency_limit=1),
            ModelEntry(COPY, "whisper", model_path=str(default_model_dir)),
        ),
        global_concurrency_limit=2,
        max_loaded_models=2,
    )
    async with running(whisper_backend, config) as server:
        first = await open_client(server.url + "?model=whisper-base")
        with pytest.raises(InvalidStatus) as caught:
            await connect(server.url + "?model=whisper-base")
        response = caught.value.response
        assert (
            response.status_code == 429 and response.headers["Content-Type"] == "application/json"
        )
        body = json.loads(response.body)["error"]
        assert body["code"] == "model_concurrency_limit" and body["type"] == "rate_limit_error"
        assert body["limit"] == {"scope": "model", "max_sessions": 1, "model": "whisper-base"}
        assert "concurrency_limit of 1" in body["message"]

        unnamed = await connect(
            server.url
        )  # two models: it waits to be told which; it holds a slot
        with pytest.raises(InvalidStatus) as caught:
            await connect(server.url + f"?model={COPY}")
        body = json.loads(caught.value.response.body)["error"]
        assert (
            caught.value.response.status_code == 429 and body["code"] == "global_concurrency_limit"
        )
        assert body["limit"] == {"scope": "global", "max_sessions": 2, "model": None}

        await first.ws.close()
        await until_state(server, lambda s: s["whisper-base"].admitted == 0)
        # the unnamed connection names the model whose only slot was just freed: admitted now
        await unnamed.send(json.dumps(update({"type": "transcription", "model": "whisper-base"})))
        created = json.loads(await asyncio.wait_for(unnamed.recv(), EVENT_TIMEOUT))
        assert created["type"] == "session.created"
        # and a second one naming it in its session.update is refused by an error event
        error, code = await refused(
            server.url, update({"type": "transcription", "model": "whisper-base"})
        )
        assert error["code"] == "model_concurrency_limit" and code == 1013
        await unnamed.close()


async def test_unloading_by_hand_ends_the_sessions_with_an_error_event(whisper_backend):
    async with running(whisper_backend, ModelsConfig()) as server:
        client = await open_client(server.url)
        events: list = []
        local_closed = asyncio.Event()
        loop = asyncio.get_running_loop()
        server.open_local_session(
            events.append, on_closed=lambda: loop.call_soon_threadsafe(local_closed.set)
        )
        await until_state(server, lambda s: s["whisper-base"].sessions == 2)
        assert await asyncio.to_thread(server.unload_model, "whisper-base") == ["whisper-base"]
        error = await client.until("error")
        assert (
            error["error"]["code"] == "model_unloaded"
            and "unloaded by hand" in error["error"]["message"]
        )
        assert await client.drain_to_close() == 1001
        await asyncio.wait_for(local_closed.wait(), EVENT_TIMEOUT)
        assert [e.type for e in events][-1] == "error" and events[-1].code == "model_unloaded"
        status = server.router.snapshot()["whisper-base"]
        assert status.state == "stopped" and status.sessions == 0
        again = await open_client(server.url)  # the next connection loads it again
        assert server.router.snapshot()["whisper-base"].loads == 2
        status, body = await asyncio.to_thread(
            http_get, f"{server.http_url}/unload?model=whisper-base"
        )
        assert status == 200 and body == {"unloaded": ["whisper-base"]}
        assert (await again.until("error"))["error"]["code"] == "model_unloaded"
        status, body = await asyncio.to_thread(
            http_get, f"{server.http_url}/unload", {"Sec-Fetch-Site": "cross-site"}
        )
        assert status == 403
