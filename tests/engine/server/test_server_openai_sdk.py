"""The official ``openai`` SDK's realtime client against the local server."""

from __future__ import annotations

import asyncio

import pytest
from openai import AsyncOpenAI
from openai.types.realtime import ConversationItemInputAudioTranscriptionCompletedEvent

from desktop_rt.engine.server.server import RealtimeServer, ServerConfig
from tests.support.clips import read_clip, reference_text
from tests.support.rt_client import EVENT_TIMEOUT, chunks_b64, wer

KEY = "sk-desktop-rt-sdk"


@pytest.fixture(scope="module")
def server(whisper_backend):
    with RealtimeServer(ServerConfig(port=0, api_key=KEY), whisper_backend) as srv:
        yield srv


async def next_of(connection, kind: str):
    async def read():
        async for event in connection:
            if event.type == "error":
                raise AssertionError(f"server error: {event.error}")
            if event.type == kind:
                return event
        raise AssertionError(f"the connection closed before {kind}")

    return await asyncio.wait_for(read(), EVENT_TIMEOUT)


@pytest.mark.slow
async def test_openai_sdk_transcribes_a_clip(server):
    client = AsyncOpenAI(
        api_key=KEY,
        base_url=f"http://127.0.0.1:{server.port}/v1",
        websocket_base_url=f"ws://127.0.0.1:{server.port}/v1",
    )
    async with client.realtime.connect(
        model="whisper-base", extra_query={"intent": "transcription"}
    ) as conn:
        created = await next_of(conn, "session.created")
        assert created.session.type == "transcription"
        await conn.session.update(
            session={
                "type": "transcription",
                "audio": {
                    "input": {
                        "format": {"type": "audio/pcm", "rate": 24000},
                        "transcription": {"model": "whisper-base", "language": "en"},
                        "turn_detection": None,
                    }
                },
            }
        )
        updated = await next_of(conn, "session.updated")
        assert updated.session.audio.input.format.rate == 24000
        for chunk in chunks_b64(read_clip("ss-0870"), rate=24000):
            await conn.input_audio_buffer.append(audio=chunk)
        await conn.input_audio_buffer.commit()
        committed = await next_of(conn, "input_audio_buffer.committed")
        completed = await next_of(conn, "conversation.item.input_audio_transcription.completed")
    assert isinstance(completed, ConversationItemInputAudioTranscriptionCompletedEvent)
    assert completed.item_id == committed.item_id
    assert completed.usage.type == "duration" and completed.usage.seconds > 5
    assert wer(reference_text("ss-0870"), completed.transcript) < 0.25, completed.transcript
    models = await client.models.list()
    assert [m.id for m in models.data] == ["whisper-base"]
