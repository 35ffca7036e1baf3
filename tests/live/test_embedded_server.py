"""A start that fails in a way nobody planned for still tells the window, instead of "loading"
forever: a missing module (psutil, once a test-only dependency) killed the helper thread and the
window said "Loading the speech model…" with no end and no message."""

from __future__ import annotations

import os
import queue
import threading

import pytest

from desktop_rt.config import ServerSettings
from desktop_rt.engine.asr.backend import AsrBackend
from desktop_rt.engine.models.repair_notice import RepairNotice
from desktop_rt.live.embedded_server import (
    ENGINE_NICENESS,
    EmbeddedServer,
    ServerState,
    load_niced,
)


def _missing_module(_spec: str) -> AsrBackend:
    raise ModuleNotFoundError("No module named 'psutil'")


def _next_state(published: queue.Queue[ServerState | RepairNotice]) -> ServerState:
    while True:
        event = published.get(timeout=30)  # the helper thread's report, or a failed test
        if isinstance(event, ServerState):
            return event


def test_an_unexpected_error_while_starting_is_published_as_failed(caplog):
    published: queue.Queue[ServerState | RepairNotice] = queue.Queue()
    server = EmbeddedServer(_missing_module, published.put)
    server.start(ServerSettings(port=0), "whisper-base", "Loading the speech model…")
    assert _next_state(published).state == "starting"
    failed = _next_state(published)
    server.stop()
    assert failed.state == "failed", failed
    assert "No module named 'psutil'" in failed.message
    assert server.server is None and server.backend is None
    assert any("could not start" in r.getMessage() for r in caplog.records)


def _niceness(thread: threading.Thread) -> int:
    """A thread's own nice value (Linux: PRIO_PROCESS with a thread id acts on that thread)."""
    assert thread.native_id is not None
    return os.getpriority(os.PRIO_PROCESS, thread.native_id)


def test_only_the_model_loads_niced_the_server_thread_keeps_the_uis_priority(whisper_backend):
    """The server and inference threads take the GIL for every append and pass: niced, they
    were preempted holding it and stalled the UI thread. The model loads on a niced thread."""
    base = os.getpriority(os.PRIO_PROCESS, 0)
    loaded_at: list[int] = []

    def factory(_spec: str) -> AsrBackend:
        loaded_at.append(os.getpriority(os.PRIO_PROCESS, 0))
        return whisper_backend

    published: queue.Queue[ServerState | RepairNotice] = queue.Queue()
    server = EmbeddedServer(factory, published.put, owns_backend=False)
    server.start(ServerSettings(port=0), "whisper-base", "Loading the speech model…")
    try:
        assert _next_state(published).state == "starting"
        assert _next_state(published).state == "ready"
        serving = [t for t in threading.enumerate() if t.name == "desktop-rt-server"]
        assert serving, [t.name for t in threading.enumerate()]
        assert loaded_at == [min(base + ENGINE_NICENESS, 19)]
        assert all(_niceness(t) == base for t in serving)
        assert os.getpriority(os.PRIO_PROCESS, 0) == base  # the caller's thread untouched
    finally:
        server.stop()


def test_an_error_while_loading_niced_is_raised_on_the_callers_thread():
    with pytest.raises(ModuleNotFoundError, match="psutil"):
        load_niced(_missing_module, "whisper-base")
