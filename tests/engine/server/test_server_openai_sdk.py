"""The official ``openai`` SDK's realtime client against the local server.

Also the README's example as it is written (no ``session.update``: 24 kHz, issue 16 bug 4) and
the transcription options of issue 16 item 2 as the SDK sends and parses them.
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from openai import AsyncOpenAI
from openai.types.realtime import ConversationItemInputAudioTranscriptionCompletedEvent

from desktop_rt.engine.server.server import RealtimeServer, ServerConfig
from tests.support.clips import read_clip, reference_text
from tests.support.rt_client import EVENT_TIMEOUT, chunks_b64, wer

KEY = "sk-desktop-rt-sdk"
LOGPROBS = "item.input_audio_transcription.logprobs"
COMPLETED = "conversation.item.input_audio_transcription.completed"


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


def sdk_client(server) -> AsyncOpenAI:
    return AsyncOpenAI(
        api_key=KEY,
        base_url=f"http://127.0.0.1:{server.port}/v1",
        websocket_base_url=f"ws://127.0.0.1:{server.port}/v1",
    )


async def until_closed(connection) -> list:
    """Every event until the server closes the connection."""

    async def read():
        return [event async for event in connection]

    return await asyncio.wait_for(read(), 4 * EVENT_TIMEOUT)


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
    ids = [m.id for m in (await client.models.list()).data]
    assert ids[0] == "whisper-base" and "gpt-4o-mini-transcribe" in ids  # the model, aliases


@pytest.mark.slow
async def test_the_readme_example_as_written(server):
    """README.md, "From another program": 24 kHz audio with no session.update."""
    client = sdk_client(server)
    b64_pcm16_24khz = chunks_b64(read_clip("ss-0870"), rate=24000, chunk_seconds=60.0)[0]
    async with client.realtime.connect(
        model="whisper-base", extra_query={"intent": "transcription"}
    ) as conn:
        created = await next_of(conn, "session.created")
        assert created.session.audio.input.format.rate == 24000  # OpenAI's default
        await conn.send({"type": "input_audio_buffer.append", "audio": b64_pcm16_24khz})
        await conn.send({"type": "input_audio_buffer.commit"})
        completed = await next_of(conn, COMPLETED)
    assert completed.usage.seconds == pytest.approx(7.1, abs=0.01)  # decoded at 24 kHz
    assert wer(reference_text("ss-0870"), completed.transcript) < 0.25, completed.transcript


@pytest.mark.slow
async def test_openai_sdk_with_logprobs_and_semantic_vad(server):
    client = sdk_client(server)
    pause = np.zeros(24_000, dtype=np.float32)  # 1.5 s at 16 kHz
    audio = np.concatenate([read_clip("ss-0870"), pause, read_clip("ss-0890"), pause])
    async with client.realtime.connect(
        model="whisper-base", extra_query={"intent": "transcription"}
    ) as conn:
        await next_of(conn, "session.created")
        await conn.session.update(
            session={
                "type": "transcription",
                "include": [LOGPROBS],
                "audio": {
                    "input": {
                        "format": {"type": "audio/pcm", "rate": 24000},
                        "transcription": {"model": "whisper-base", "language": "en"},
                        "turn_detection": {"type": "semantic_vad", "eagerness": "high"},
                    }
                },
            }
        )
        updated = await next_of(conn, "session.updated")
        assert updated.session.include == [LOGPROBS]
        turn = updated.session.audio.input.turn_detection
        assert (turn.type, turn.eagerness) == ("semantic_vad", "high")
        for chunk in chunks_b64(audio, rate=24000):
            await conn.input_audio_buffer.append(audio=chunk)
        await conn.send({"type": "input_audio_buffer.commit", "final": True})
        events = await until_closed(conn)
    kinds = [e.type for e in events]
    assert "error" not in kinds, events
    assert kinds.count("input_audio_buffer.speech_stopped") >= 2  # turns ended by the VAD
    deltas = [e for e in events if e.type == "conversation.item.input_audio_transcription.delta"]
    completed = [e for e in events if e.type == COMPLETED]
    assert deltas and completed
    for delta in deltas:
        assert "".join(lp.token for lp in delta.logprobs) == delta.delta
        assert all(
            lp.logprob <= 0 and bytes(lp.bytes).decode() == lp.token for lp in delta.logprobs
        )
    for done in completed:
        assert "".join(lp.token for lp in done.logprobs) == done.transcript
        assert done.languages[0].code == "en" and done.usage.type == "duration"
    reference = f"{reference_text('ss-0870')} {reference_text('ss-0890')}"
    text = " ".join(done.transcript for done in completed)
    assert wer(reference, text) < 0.25, text
