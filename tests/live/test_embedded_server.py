"""A start that fails in a way nobody planned for still tells the window, instead of "loading"
forever: a missing module (psutil, once a test-only dependency) killed the helper thread and the
window said "Loading the speech model…" with no end and no message."""

from __future__ import annotations

import queue

from desktop_rt.config import ServerSettings
from desktop_rt.engine.asr.backend import AsrBackend
from desktop_rt.engine.models.repair_notice import RepairNotice
from desktop_rt.live.embedded_server import EmbeddedServer, ServerState


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
