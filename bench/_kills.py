"""kill -9 of ``desktop-rt serve`` mid-transcription, for bench_reliability.py.

``kills(config_dir, data_dir, rounds, audio)``: each round starts the server on the same data
folder, finishes one session and waits until its activity row is written, then opens three
sessions that append speech and commit, and kills the server with SIGKILL once they are
transcribing. After
each kill the activity database must pass ``PRAGMA integrity_check`` and still hold every row
of a finished session; the next round's start shows the server comes back on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sqlite3
import time
from pathlib import Path

from _serve_child import Serve, open_session, until

COMPLETED = "conversation.item.input_audio_transcription.completed"


def activity_rows(db: Path) -> int:
    if not db.exists():
        return 0
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)) as con:
        return int(con.execute("SELECT count(*) FROM activity").fetchone()[0])


def integrity(db: Path) -> str:
    with contextlib.closing(sqlite3.connect(str(db), timeout=30)) as con:
        return str(con.execute("PRAGMA integrity_check").fetchone()[0])


async def finished_session(url: str, audio: str) -> int:
    ws = await open_session(url)
    await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": audio}))
    await ws.send(json.dumps({"type": "input_audio_buffer.commit"}))
    seen = await until(ws, COMPLETED, 300)
    await ws.close()
    return len(seen[-1].get("transcript", "").split())


async def transcribing(url: str, audio: str) -> None:
    ws = await open_session(url)
    await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": audio}))
    await ws.send(json.dumps({"type": "input_audio_buffer.commit"}))
    await until(ws, "input_audio_buffer.committed")


def one_round(config_dir: Path, db: Path, kept: int, audio: str) -> dict:
    server = Serve(config_dir)
    words = asyncio.run(finished_session(server.url, audio))
    deadline = time.monotonic() + 30  # the row is written by the activity thread
    while activity_rows(db) < kept + 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    written = activity_rows(db) >= kept + 1

    async def three() -> None:
        await asyncio.gather(*(transcribing(server.url, audio) for _ in range(3)))

    asyncio.run(three())
    os.kill(server.proc.pid, signal.SIGKILL)
    server.proc.wait(30)
    rows = activity_rows(db)
    return {
        "words": words,
        "written_before_kill": written,
        "rows": rows,
        "integrity": integrity(db),
    }


def kills(config_dir: Path, data_dir: Path, rounds: int, audio: str) -> dict:
    db = data_dir / "activity.sqlite3"
    base = activity_rows(db)  # rows of the parts that ran before
    results = []
    for n in range(rounds):
        results.append(one_round(config_dir, db, base + n, audio))
        results[-1]["rows_expected_at_least"] = base + n + 1
    server = Serve(config_dir)  # it comes back once more after the last kill
    health = server.health()
    server.stop()
    return {
        "kills": rounds,
        "all_integrity_ok": all(r["integrity"] == "ok" for r in results),
        "rows_written_before_kill": sum(r["written_before_kill"] for r in results),
        "rows_lost": sum(max(0, r["rows_expected_at_least"] - r["rows"]) for r in results),
        "finished_words": sum(r["words"] for r in results),
        "restart_after_last": health.get("status"),
        "rounds": results,
    }
