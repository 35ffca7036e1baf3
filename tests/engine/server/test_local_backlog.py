"""The window's own session keeps what the microphone heard while the model is behind.

A backend that holds its pass keeps every later append waiting: a websocket client would be
refused beyond 30 s of backlog (``audio_backlog_full``), the window's session keeps 40 s and
more, up to ``LOCAL_BACKLOG_SECONDS``, and hands all of it to the model once the pass ends.
"""

from __future__ import annotations

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.asr.streaming import StreamingConfig
from desktop_rt.engine.protocol.events import ErrorEvent
from desktop_rt.engine.server.config import ServerConfig
from desktop_rt.engine.server.local import LOCAL_BACKLOG_SECONDS
from desktop_rt.engine.server.server import RealtimeServer
from tests.support.held_backend import WAIT, HeldBackend, until


def test_a_window_session_keeps_more_than_a_clients_backlog_while_the_model_is_behind():
    backend = HeldBackend()
    config = ServerConfig(port=0, record_activity=False, streaming=StreamingConfig(vad=False))
    assert config.limits.max_backlog_seconds < 40.0 < LOCAL_BACKLOG_SECONDS
    errors: list[ErrorEvent] = []
    with RealtimeServer(config, backend) as server:
        local = server.open_local_session(
            lambda event: errors.append(event) if isinstance(event, ErrorEvent) else None
        )
        try:
            local.append(np.zeros(SAMPLE_RATE, dtype=np.float32))
            assert backend.entered.wait(WAIT)  # the model is busy with the first second
            second = np.full(SAMPLE_RATE, 0.01, dtype=np.float32)
            for _ in range(40):  # 40 s more, as a microphone delivers it
                local.append(second)
            assert until(lambda: local.lag_seconds >= 40.0), local.lag_seconds
        finally:
            backend.release.set()
        assert until(lambda: local.lag_seconds == 0.0)  # all of it was taken in
        local.close()
    assert errors == []
