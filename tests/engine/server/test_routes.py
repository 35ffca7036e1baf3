"""What ``GET /health`` says of inference: each session's lag and what passes cost.

A backend that holds its pass until the test lets it go keeps audio waiting, so the lag is
seen where the window and clients read it: the local session, and ``/health`` over HTTP.
"""

from __future__ import annotations

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.asr.streaming import StreamingConfig
from desktop_rt.engine.server.config import ServerConfig
from desktop_rt.engine.server.routes import inference_health
from desktop_rt.engine.server.server import RealtimeServer
from tests.support.held_backend import WAIT, HeldBackend, until
from tests.support.rt_client import http_get


def test_no_worker_reports_no_lag_and_no_inference():
    assert inference_health(None) == {"lag_seconds": 0.0, "inference": None}


def test_audio_held_behind_a_pass_is_lag_for_the_session_and_for_health():
    backend = HeldBackend()
    config = ServerConfig(port=0, record_activity=False, streaming=StreamingConfig(vad=False))
    with RealtimeServer(config, backend) as server:
        status, health = http_get(f"{server.http_url}/health")
        assert status == 200 and health["lag_seconds"] == 0.0
        assert health["inference"]["cpu_budget"] == 0.8 and health["inference"]["streams"] == []
        local = server.open_local_session(lambda _event: None)
        try:
            local.append(np.zeros(SAMPLE_RATE, dtype=np.float32))
            assert backend.entered.wait(WAIT)  # the worker is in a pass over the first second
            local.append(np.zeros(3 * SAMPLE_RATE, dtype=np.float32))
            assert until(lambda: local.lag_seconds >= 3.0)
            health = http_get(f"{server.http_url}/health")[1]
            assert health["lag_seconds"] >= 3.0
            [stream] = health["inference"]["streams"]
            assert stream["lag_seconds"] >= 3.0
        finally:
            backend.release.set()
        assert until(lambda: local.lag_seconds == 0.0)  # taken in once the pass ended
        # A pass is counted when it ends, which may be just after its audio was taken in.
        assert until(lambda: http_get(f"{server.http_url}/health")[1]["inference"]["passes"] >= 1)
        health = http_get(f"{server.http_url}/health")[1]
        assert health["inference"]["wall_seconds_per_pass"] > 0.0
        local.close()
