"""A realtime server alone in a child process, for tests that read the server's own memory.

``ServerProcess(activity_path)`` starts ``python -m tests.support.session_server`` in the
repository root: a :class:`RealtimeServer` on loopback with a silent backend (the speech gate's
Silero VAD is real) and no session limit; ``.url`` is its websocket URL. ``measure()`` waits
until the server has closed every session and a second more (its own trim runs half a second
after a close), then returns its RSS in MB after ``gc.collect()`` as the system sees it, and
after ``malloc_trim(0)`` (what is still live). ``stop()`` ends the child. Nothing else runs in
that process, so neither the test's clients nor what earlier tests left counts.
"""

from __future__ import annotations

import ctypes
import gc
import json
import subprocess
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]
CLOSE_TIMEOUT = 180.0
"""Seconds the child waits for the server to close its sessions, or for the child to exit."""


class ServerProcess:
    """See the module docstring."""

    def __init__(self, activity_path: Path) -> None:
        self._child = subprocess.Popen(
            [sys.executable, "-m", "tests.support.session_server", str(activity_path)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.url: str = self._reply()["url"]

    def measure(self) -> tuple[float, float]:
        """RSS in MB as the system sees it, and after trimming the allocator."""
        self._send("measure")
        reply = self._reply()
        assert not reply["open"], f"the server did not close its sessions ({reply['open']} open)"
        return reply["seen"], reply["trimmed"]

    def stop(self) -> None:
        if self._child.poll() is None:
            self._send("stop")
            try:
                self._child.wait(60)
            except subprocess.TimeoutExpired:
                self._child.kill()
                self._child.wait()

    def _send(self, line: str) -> None:
        assert self._child.stdin is not None
        self._child.stdin.write(line + "\n")
        self._child.stdin.flush()

    def _reply(self) -> dict:
        assert self._child.stdout is not None
        line = self._child.stdout.readline()  # the child answers or exits: readline returns
        if not line:
            raise RuntimeError(f"the server process exited ({self._child.wait(CLOSE_TIMEOUT)})")
        return json.loads(line)


def _rss_mb() -> tuple[float, float]:
    gc.collect()
    seen = psutil.Process().memory_info().rss / 2**20
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    return seen, psutil.Process().memory_info().rss / 2**20


def _serve(activity_path: Path) -> None:
    from desktop_rt.engine.server.server import RealtimeServer, ServerConfig
    from tests.engine.server.test_http_hardening import SilentBackend

    config = ServerConfig(port=0, activity_path=activity_path, max_sessions=0)
    server = RealtimeServer(config, SilentBackend())
    server.start()
    print(json.dumps({"url": server.url}), flush=True)
    try:
        for line in sys.stdin:
            if line.strip() != "measure":
                break
            deadline = time.monotonic() + CLOSE_TIMEOUT
            while len(server.sessions) and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(1)  # the server gives freed memory back half a second after a close
            seen, trimmed = _rss_mb()
            reply = {"seen": seen, "trimmed": trimmed, "open": len(server.sessions)}
            print(json.dumps(reply), flush=True)
    finally:
        server.stop()


if __name__ == "__main__":
    _serve(Path(sys.argv[1]))
