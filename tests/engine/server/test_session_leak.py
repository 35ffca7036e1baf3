"""server_vad sessions give their memory back: 500 opened and closed in batches over loopback.

Each session turns server_vad on, sends a second of speech and leaves. After each batch the test
waits until the server has closed every session, and a second more (a session outlives its client while its queued
audio is scored), then RSS is measured after ``gc.collect()``: as the system sees it (what the
server gives back by itself) and after the test's own ``malloc_trim(0)`` (what is still live).
A silent backend stands in for the model; the speech gate's Silero VAD is real.
"""

from __future__ import annotations

import asyncio
import ctypes
import gc
import time

import psutil
import pytest

from desktop_rt.engine.server.server import RealtimeServer, ServerConfig
from tests.engine.server.test_http_hardening import SilentBackend
from tests.support.clips import read_clip
from tests.support.rt_client import open_client, pcm16_b64

SESSIONS = 500
BATCH = 20
ALLOWED_GROWTH_MB = 30

UPDATE = {
    "type": "session.update",
    "session": {
        "type": "transcription",
        "audio": {
            "input": {
                "format": {"type": "audio/pcm", "rate": 24000},
                "turn_detection": {"type": "server_vad"},
            }
        },
    },
}


def rss_mb() -> tuple[float, float]:
    """RSS in MB as the system sees it, and after trimming the allocator."""
    gc.collect()
    seen = psutil.Process().memory_info().rss / 2**20
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    return seen, psutil.Process().memory_info().rss / 2**20


async def one_session(url: str, audio: str) -> None:
    client = await open_client(url)
    await client.send(UPDATE)
    await client.until("session.updated")
    await client.send({"type": "input_audio_buffer.append", "audio": audio})
    await client.ws.close()


def run_batch(server: RealtimeServer, audio: str) -> None:
    async def batch() -> None:
        await asyncio.gather(*(one_session(server.url, audio) for _ in range(BATCH)))

    asyncio.run(batch())
    deadline = time.monotonic() + 120
    while len(server.sessions) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not len(server.sessions), "the server did not close its sessions"
    time.sleep(1)  # the server gives freed memory back half a second after a close


@pytest.mark.slow
def test_server_vad_sessions_do_not_leak(tmp_path):
    audio = pcm16_b64(read_clip("ss-0880")[:16000], 24000)
    server = RealtimeServer(
        ServerConfig(port=0, activity_path=tmp_path / "activity.sqlite3"), SilentBackend()
    )
    server.start()
    try:
        run_batch(server, audio)  # warm-up: imports, the first VAD, allocator pools
        before = rss_mb()
        for _ in range(SESSIONS // BATCH):
            run_batch(server, audio)
        after = rss_mb()
    finally:
        server.stop()
    assert after[0] <= before[0] + ALLOWED_GROWTH_MB, ("as seen", before, after)
    assert after[1] <= before[1] + ALLOWED_GROWTH_MB, ("trimmed", before, after)
