"""Sharing captions from the real app: what the window captions reaches a viewer on the LAN link."""

from __future__ import annotations

import json
import threading

import pytest
from websockets.sync.client import connect

from desktop_rt.config import PUSH_TO_TALK, AudioSettings, ServerSettings, Settings, ShareSettings
from desktop_rt.engine.audio.sources import FileAudioSource
from tests.support.clips import read_clip, reference_text, wer

pytestmark = pytest.mark.slow

CLIP = "ss-0890"


class FeedReader:
    """A viewer of the caption feed on its own thread; ``committed`` is the text shown so far."""

    def __init__(self, url: str):
        self.lines: dict[str, str] = {}
        self.frames = 0
        self.lock = threading.Lock()
        self.ws = connect(url, open_timeout=30)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        for message in self.ws:
            frame = json.loads(message)
            with self.lock:
                self.frames += 1
                if frame["type"] == "snapshot":
                    self.lines = {line["id"]: line["committed"] for line in frame["lines"]}
                elif frame["type"] == "line":
                    self.lines[frame["line"]["id"]] = frame["line"]["committed"]

    @property
    def committed(self) -> str:
        with self.lock:
            return " ".join(text.strip() for text in self.lines.values() if text.strip())


def test_the_shared_feed_carries_the_windows_captions(make_app, qtbot):
    settings = Settings().with_group(
        server=ServerSettings(port=0),
        audio=AudioSettings(mode=PUSH_TO_TALK),
        share=ShareSettings(enabled=True, port=0, token="viewer-token-0123456789"),
    )
    source = FileAudioSource(read_clip(CLIP), autoplay=False)
    app = make_app(source, settings=settings)
    control = app.window.share
    qtbot.waitUntil(lambda: control.state.shared, timeout=30_000)
    assert control.state.url.endswith("/captions?token=viewer-token-0123456789")
    port = control.share.server.port
    reader = FeedReader(f"ws://127.0.0.1:{port}/captions/feed?token=viewer-token-0123456789")
    controller = app.controller
    controller.talk_down()
    source.play()
    qtbot.waitUntil(source.finished.is_set, timeout=30_000)
    controller.talk_up()
    qtbot.waitUntil(lambda: any(t.final for t in app.window.captions.turns()), timeout=60_000)
    window_text = app.window.captions.committed_text()
    qtbot.waitUntil(lambda: wer(window_text, reader.committed) < 0.05, timeout=10_000)
    assert wer(reference_text(CLIP), reader.committed) < 0.2, reader.committed
    reader.ws.close()
