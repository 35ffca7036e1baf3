"""The ``desktop-rt-session`` system: the app's hands-free path, paced, in one child process.

An in-process :class:`~desktop_rt.engine.server.server.RealtimeServer` (port 0, no activity
log) on the embedded model, and one local session set as the app sets a hands-free session
(``server_vad`` with the app's defaults, ``--language``). The stream is appended at pace in
100 ms chunks (``_common.run_paced``); then ``end_input`` and the session's close. Returns
the child's JSON: ``words`` are the deltas' words (the live captions), each with its
``item_id`` and ``commit``, the wall time its delta arrived (seconds after pacing began);
``start``/``end`` are None: the parent aligns them to offline word times by text
(``_align.align_ends``), as ``bench_server`` does. ``completed`` is every completed transcript
in arrival order (what history saves), ``events`` every server event on the wire and
``max_backlog`` the most audio the session had waiting for the recognizer, sampled after each
chunk. :func:`saved_text` and :func:`live_text` are the texts the two WERs score.
"""

from __future__ import annotations

import re
import threading
import time

import _common as C

SESSION = "desktop-rt-session"
CLOSE_TIMEOUT = 600.0  # seconds the session may take to close after the input ended


def saved_text(raw: dict) -> str:
    """What a run leaves saved: its completed transcripts joined, else its words joined."""
    if "completed" in raw:
        return " ".join(c["transcript"].strip() for c in raw["completed"])
    return "".join(w["text"] for w in raw["words"])


def live_text(raw: dict) -> str | None:
    """What a session run showed live: its deltas joined, item by item (an item's first delta
    has no leading space, so items are joined with one); None for systems without turns."""
    if "completed" not in raw:
        return None
    items: dict[str, list[str]] = {}
    for w in raw["words"]:
        items.setdefault(w["item_id"], []).append(w["text"])
    return " ".join("".join(texts).strip() for texts in items.values())


class _Recorder:
    """Server events as they arrive (server thread), stamped on the pacing clock."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.words: list[dict] = []
        self.completed: list[dict] = []
        self.events: list[dict] = []
        self.closed = threading.Event()
        self._lock = threading.Lock()

    def on_event(self, event) -> None:
        from desktop_rt.engine.protocol.events import (
            TranscriptionCompleted,
            TranscriptionDelta,
            to_wire,
        )

        now = time.monotonic() - self.t0
        with self._lock:
            self.events.append(to_wire(event))
            if isinstance(event, TranscriptionDelta):
                for text in re.findall(r"\s*\S+", event.delta):
                    word = {"text": text, "start": None, "end": None, "commit": now}
                    self.words.append(word | {"item_id": event.item_id})
            elif isinstance(event, TranscriptionCompleted):
                self.completed.append(
                    {"item_id": event.item_id, "transcript": event.transcript, "at": now}
                )


def _session_update(language: str | None):
    """The app's hands-free ``session.update``: its saved VAD defaults, this language."""
    from desktop_rt.config import Settings
    from desktop_rt.live.session import LiveSettings

    return LiveSettings(language, Settings().vad).session_update()


def child_desktop_rt_session(stream: C.Stream, args, memory: C.MemoryLog) -> dict:
    from desktop_rt.engine.asr.whisper import WhisperBackend, WhisperOptions
    from desktop_rt.engine.server.server import RealtimeServer, ServerConfig

    threads = C.engine_threads(args)  # as child_desktop_rt
    backend = WhisperBackend(args.model, WhisperOptions(threads=threads))
    memory.mark("model")
    backend.transcribe(stream.audio[: 2 * C.SAMPLE_RATE], language=args.language)  # warm-up
    memory.mark("warm-up")
    rec = _Recorder()
    with RealtimeServer(ServerConfig(port=0, record_activity=False), backend) as server:
        local = server.open_local_session(
            rec.on_event, emit_tentative=False, on_closed=rec.closed.set
        )
        local.send(_session_update(args.language))
        memory.mark("engine")

        lags = [0.0]

        def step() -> list:
            lags.append(local.lag_seconds)  # audio waiting for the recognizer: the lag
            return []

        def finish() -> list:
            local.end_input()
            if not rec.closed.wait(CLOSE_TIMEOUT):
                raise RuntimeError(f"the session did not close within {CLOSE_TIMEOUT:g} s")
            return []

        rec.t0 = time.monotonic()  # run_paced's t0 follows within microseconds
        res = C.run_paced(
            stream.audio, speed=args.speed, insert=local.append, step=step, finish=finish
        )
    memory.mark("stream")
    out = {
        "words": rec.words,
        "completed": rec.completed,
        "events": rec.events,
        "final_latency": res.final_latency,
        "cpu_seconds": res.cpu_seconds,
        "wall_seconds": res.wall_seconds,
        "audio_end_wall": res.audio_end_wall,
        "steps": res.steps,
        "max_backlog": max(res.max_backlog, *lags),
        "slow_steps": res.slow_steps,
        "schedule": res.schedule,
        "other_load": res.other_load,
    }
    out["config"] = {"turn_detection": "server_vad (app defaults)", "threads": threads}
    return out
