"""server_vad sessions give their memory back: 500 opened and closed in batches over loopback.

Each session turns server_vad on, sends a second of speech and leaves. The server runs alone in
a child process (tests/support/session_server.py), so the RSS read is the server's: not the
test's clients, nor what earlier tests of the suite hold. After each batch the child waits until
the server has closed every session, and a second more (a session outlives its client while its
queued audio is scored), then reads RSS after ``gc.collect()``: as the system sees it (what the
server gives back by itself) and after ``malloc_trim(0)`` (what is still live). A leak grows
RSS with every batch; the allocator settling steps it now and then. So after warm-up batches the
growth per batch is fitted over all batches (Theil-Sen: the median of the slopes between every
two batches, which a single high batch or a late settling does not move), and that growth
times the batches must stay within ``ALLOWED_GROWTH_MB``. A silent backend stands in for the
model; the speech gate's Silero VAD is real. Without the collector, a closed session leaves none of its objects behind (the second
test): a reference cycle would keep its native VAD contexts until a full collection.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
from collections import Counter
from collections.abc import Sequence

import pytest

from desktop_rt.engine.asr.worker_stream import WorkerStream
from desktop_rt.engine.audio.speech_gate import SpeechGate
from desktop_rt.engine.audio.vad import SileroProbability
from desktop_rt.engine.protocol.session import RealtimeSession
from desktop_rt.engine.server.bridge import SessionBridge
from desktop_rt.engine.server.server import RealtimeServer, ServerConfig
from tests.engine.server.test_http_hardening import SilentBackend
from tests.support.clips import read_clip
from tests.support.rt_client import open_client, pcm16_b64
from tests.support.session_server import ServerProcess

SESSIONS = 500
BATCH = 20
WARM_UP_BATCHES = 3  # imports, the first VADs, allocator pools and arenas
ALLOWED_GROWTH_MB = 30
SESSION_TYPES = (RealtimeSession, SessionBridge, WorkerStream, SpeechGate, SileroProbability)

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


def speech() -> str:
    return pcm16_b64(read_clip("ss-0880")[:16000], 24000)


async def one_session(url: str, audio: str) -> None:
    client = await open_client(url)
    await client.send(UPDATE)
    await client.until("session.updated")
    await client.send({"type": "input_audio_buffer.append", "audio": audio})
    await client.ws.close()


def run_batch(url: str, audio: str) -> None:
    async def batch() -> None:
        await asyncio.gather(*(one_session(url, audio) for _ in range(BATCH)))

    asyncio.run(batch())


def growth_per_batch(rss: Sequence[float]) -> float:
    """Theil-Sen slope of ``rss`` over the batch index: MB per batch."""
    pairs = [(j, i) for j in range(len(rss)) for i in range(j)]
    return statistics.median((rss[j] - rss[i]) / (j - i) for j, i in pairs)


def test_growth_per_batch_is_the_trend_not_one_batch():
    assert growth_per_batch([1.0, 2.0, 3.0, 4.0]) == pytest.approx(1.0)
    assert growth_per_batch([100.0] * 2 + [106.0] * 23) == 0.0  # the allocator settled late
    assert growth_per_batch([100.0] * 10 + [110.0] + [100.0] * 14) == 0.0  # one high batch
    settling_leak = [100.0 + 1.4 * i + (6.0 if i > 1 else 0.0) for i in range(25)]
    assert growth_per_batch(settling_leak) == pytest.approx(1.4)
    leak_in_jumps = [100.0 + 10.0 * (i // 3) for i in range(25)]  # 10 MB every third batch
    assert growth_per_batch(leak_in_jumps) * 25 > 80


@pytest.mark.slow
def test_server_vad_sessions_do_not_leak(tmp_path):
    audio = speech()
    server = ServerProcess(tmp_path / "activity.sqlite3")
    try:
        for _ in range(WARM_UP_BATCHES):
            run_batch(server.url, audio)
            server.measure()
        rss = []
        for _ in range(SESSIONS // BATCH):
            run_batch(server.url, audio)
            rss.append(server.measure())
    finally:
        server.stop()
    seen, trimmed = ([mb[k] for mb in rss] for k in (0, 1))
    batches = len(rss)
    for name, series in (("as seen", seen), ("trimmed", trimmed)):
        growth = growth_per_batch(series) * batches
        assert growth <= ALLOWED_GROWTH_MB, (name, f"{growth:.1f} MB", series)


def session_objects() -> Counter[str]:
    """How many objects of a session's types exist (gc's view; no collection runs)."""
    return Counter(type(o).__name__ for o in gc.get_objects() if isinstance(o, SESSION_TYPES))


def test_a_closed_session_leaves_nothing_for_the_collector(tmp_path):
    """With the collector off, every object of a closed session is freed by its last reference
    going (the loop and the worker let go of it soon after the close); one held by a reference
    cycle never is, and the bounded wait runs out."""
    server = RealtimeServer(
        ServerConfig(port=0, activity_path=tmp_path / "activity.sqlite3", max_sessions=0),
        SilentBackend(),
    )
    server.start()
    gc.collect()
    gc.disable()
    try:
        before = session_objects()
        run_batch(server.url, speech())
        deadline = time.monotonic() + 30
        while (left := session_objects() - before) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not len(server.sessions), "the server did not close its sessions"
    finally:
        gc.enable()
        server.stop()
    assert not left, f"closed sessions wait for the collector: {dict(left)}"
