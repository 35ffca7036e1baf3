"""Model aliases over real websockets: the names OpenAI clients and frameworks send by default.

LiveKit's OpenAI STT plugin and the Node SDK put ``gpt-4o-mini-transcribe`` in ``?model=``; it
(and every name in ``OPENAI_NAMES``) reaches the default model, in the URL and in a
``session.update``, and ``[aliases]`` in models.toml routes a name to another model.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from desktop_rt.engine.models.aliases import OPENAI_NAMES
from desktop_rt.engine.models.catalogue import EMBEDDED_ENTRY, ModelEntry, ModelsConfig
from desktop_rt.engine.server.server import RealtimeServer, ServerConfig
from tests.support.clips import read_clip, reference_text
from tests.support.rt_client import (
    EVENT_TIMEOUT,
    Client,
    check_item_order,
    http_get,
    open_client,
    wer,
)

SECOND = "second"


@contextlib.asynccontextmanager
async def running(backend, config: ModelsConfig | None = None):
    server = RealtimeServer(ServerConfig(port=0, models=config), backend)
    await asyncio.to_thread(server.start)
    try:
        yield server
    finally:
        await asyncio.to_thread(server.stop)


def with_second(folder, **settings) -> ModelsConfig:
    second = ModelEntry(SECOND, "whisper", model_path=str(folder))
    return ModelsConfig((EMBEDDED_ENTRY, second), max_loaded_models=2, **settings)


def model_of(event: dict) -> str:
    return event["session"]["audio"]["input"]["transcription"]["model"]


async def naming_in_update(url: str, model: str) -> Client:
    """A connection that names ``model`` in its first ``session.update``; after session.created."""
    ws = await connect(url, max_size=None, open_timeout=60)
    client = Client(ws)
    await client.send(
        {"type": "session.update", "session": {"type": "transcription", "model": model}}
    )
    created = await client.next()
    assert created["type"] == "session.created", created
    return client


async def transcript(client: Client, name: str = "ss-0880") -> str:
    """One clip at 24 kHz and a final commit on ``client``; its transcript, scored."""
    await client.configure(rate=24_000, language="en")
    await client.append_clip(read_clip(name))
    await client.send({"type": "input_audio_buffer.commit", "final": True})
    assert await client.drain_to_close() == 1000
    check_item_order(client.events)
    text = "".join(client.transcripts())
    assert wer(reference_text(name), text) < 0.25, text
    return text


async def test_a_framework_default_in_the_url_is_served_by_the_default_model(whisper_backend):
    async with running(whisper_backend) as server:  # no models file: `desktop-rt serve`
        client = await open_client(
            f"{server.url}?model=gpt-4o-mini-transcribe&intent=transcription"
        )
        assert model_of(client.events[0]) == "whisper-base"  # the model that serves it
        await transcript(client)
        status, body = await asyncio.to_thread(http_get, f"{server.http_url}/v1/models")
        assert status == 200
        assert [m["id"] for m in body["data"]] == ["whisper-base", *OPENAI_NAMES]
        assert all(m["object"] == "model" for m in body["data"])
        dated = await open_client(f"{server.url}?model=gpt-4o-transcribe-2025-03-20")
        assert model_of(dated.events[0]) == "whisper-base"
        await dated.ws.close()


async def test_an_openai_name_in_a_session_update_chooses_the_default_model(
    whisper_backend, default_model_dir
):
    async with running(whisper_backend, with_second(default_model_dir)) as server:
        client = await naming_in_update(server.url, "whisper-1")
        assert model_of(client.events[0]) == "whisper-base"
        await client.ws.close()
        assert server.router.snapshot()[SECOND].state == "stopped"  # not loaded for it


async def test_an_alias_from_the_models_file_routes_to_its_model(
    whisper_backend, default_model_dir
):
    config = with_second(
        default_model_dir, aliases=(("gpt-4o-transcribe", SECOND), ("team-fast", SECOND))
    )
    async with running(whisper_backend, config) as server:
        client = await open_client(f"{server.url}?model=gpt-4o-transcribe")
        assert model_of(client.events[0]) == SECOND
        await transcript(client)
        other = await naming_in_update(server.url, "team-fast")
        assert model_of(other.events[0]) == SECOND
        await other.ws.close()
        status, body = await asyncio.to_thread(http_get, f"{server.http_url}/v1/models")
        ids = [m["id"] for m in body["data"]]
        assert ids[:2] == ["whisper-base", SECOND] and len(ids) == len(set(ids))
        assert set(ids) == {"whisper-base", SECOND, "team-fast", *OPENAI_NAMES}
        assert await asyncio.to_thread(server.activity.wait_recorded, 2, EVENT_TIMEOUT)
        rows = await asyncio.to_thread(server.activity.rows, 2)
        assert [row.model for row in rows] == [SECOND, SECOND]  # under the model's own id


async def test_an_alias_counts_against_its_model_limit_at_the_handshake(
    whisper_backend, default_model_dir
):
    limited = dataclasses.replace(EMBEDDED_ENTRY, concurrency_limit=1)
    config = ModelsConfig((limited,), max_loaded_models=1)
    async with running(whisper_backend, config) as server:
        first = await open_client(f"{server.url}?model=whisper-1")
        with pytest.raises(InvalidStatus) as caught:
            await connect(f"{server.url}?model=gpt-4o-mini-transcribe")
        assert caught.value.response.status_code == 429
        body = json.loads(caught.value.response.body)["error"]
        assert (
            body["code"] == "model_concurrency_limit" and body["limit"]["model"] == "whisper-base"
        )
        await first.ws.close()
