"""A real headless chromium driven over the Chrome DevTools protocol (a tiny CDP client).

``with Chromium(tmp_path) as browser: page = browser.open(url); page.wait_for(js)``. Chromium
missing fails the test (scripts/install.sh --test installs it); nothing is skipped.
"""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import ClientConnection, connect

__all__ = ["Chromium", "Page", "chromium_path"]

START_TIMEOUT = 60.0


def chromium_path() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path is not None:
            return path
    pytest.fail(
        "chromium is not installed: run scripts/install.sh --test (apt-get install chromium)"
    )


class Chromium:
    """One headless browser process with its own profile in ``folder``."""

    def __init__(self, folder: Path):
        self.folder = folder
        self._ids = itertools.count(1)
        self.process: subprocess.Popen[bytes] | None = None
        self.ws: ClientConnection | None = None

    def __enter__(self) -> Chromium:
        profile = self.folder / "chromium-profile"
        profile.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [
                chromium_path(),
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-dev-shm-usage",
                f"--user-data-dir={profile}",
                "--remote-debugging-port=0",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + START_TIMEOUT
        while not (port_file.exists() and len(port_file.read_text().splitlines()) >= 2):
            if self.process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"chromium did not start (exit status {self.process.poll()})")
            time.sleep(0.05)
        port, path = port_file.read_text().splitlines()[:2]
        self.ws = connect(f"ws://127.0.0.1:{port}{path}", max_size=None, open_timeout=30)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.ws is not None:
            self.ws.close()
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None):
        """Send one command and return its result (events meanwhile are dropped)."""
        assert self.ws is not None
        message_id = next(self._ids)
        message: dict[str, Any] = {"id": message_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        self.ws.send(json.dumps(message))
        while True:
            reply = json.loads(self.ws.recv(timeout=60))
            if reply.get("id") == message_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def open(self, url: str) -> Page:
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})
        page = Page(self, session["sessionId"])
        page.call("Page.enable")
        page.call("Runtime.enable")
        page.call("Page.navigate", {"url": url})
        page.wait_for("document.readyState === 'complete'")
        return page


class Page:
    """One tab, attached in flat mode."""

    def __init__(self, browser: Chromium, session: str):
        self.browser, self.session = browser, session

    def call(self, method: str, params: dict[str, Any] | None = None):
        return self.browser.call(method, params, self.session)

    def evaluate(self, expression: str) -> Any:
        """The JSON value of ``expression`` (awaited if it is a promise)."""
        result = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 60.0, poll: float = 0.1) -> Any:
        """Poll ``expression`` until it is truthy (bounded); its last value either way."""
        deadline = time.monotonic() + timeout
        value = self.evaluate(expression)
        while not value and time.monotonic() < deadline:
            time.sleep(poll)
            value = self.evaluate(expression)
        return value
