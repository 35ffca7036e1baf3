"""Take docs/screenshot.png: the real app under an X server, captioning four test sentences.

    Xvfb :99 -screen 0 1280x900x24 &
    DISPLAY=:99 QT_QPA_PLATFORM=xcb python docs/screenshot.py docs/screenshot.png

The clips in tests/data play as the microphone (push-to-talk held over each sentence); the
picture is taken while the last sentence is still tentative (dimmed). Uses throwaway data and
config folders unless DESKTOP_RT_DATA_DIR / DESKTOP_RT_CONFIG_DIR are set (settings are not saved).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_scratch = Path(tempfile.mkdtemp(prefix="desktop-rt-shot-"))
os.environ.setdefault("DESKTOP_RT_DATA_DIR", str(_scratch / "data"))
os.environ.setdefault("DESKTOP_RT_CONFIG_DIR", str(_scratch / "config"))
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtGui import QGuiApplication  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from desktop_rt.config import settings_from_dict  # noqa: E402
from desktop_rt.engine.audio.file_decode import load_audio_file  # noqa: E402
from desktop_rt.engine.audio.sources import FileAudioSource  # noqa: E402
from desktop_rt.ui.app import build_app  # noqa: E402

CLIPS = ["ss-0880", "ss-0890", "ss-0920", "ss-0870"]


def main(out: str) -> int:
    settings, _ = settings_from_dict(
        {
            "version": 2,
            "audio": {"mode": "push_to_talk"},
            "captions": {"font_size": 20},
            "transcription": {"language": "en"},
        }
    )
    app = QApplication(sys.argv[:1])
    app.setApplicationName("desktop-rt")
    app.setQuitOnLastWindowClosed(False)
    gap = np.zeros(16000, dtype=np.float32)
    parts, ends, t = [], [], 0.0
    for name in CLIPS:
        clip = load_audio_file(ROOT / "tests" / "data" / f"{name}.wav")
        parts += [clip, gap]
        t += len(clip) / 16000 + 1.0
        ends.append(t - 0.5)
    source = FileAudioSource(np.concatenate(parts), name="Built-in microphone")
    desktop = build_app(settings=settings, source_factory=lambda _s: source, persist_settings=False)
    window, controller = desktop.window, desktop.controller
    window.resize(940, 640)
    desktop.start()
    state = {"ticks": 0, "held": False, "turn": 0}

    def step() -> None:
        state["ticks"] += 1
        if controller.listening and not state["held"] and state["turn"] < len(ends):
            state["held"] = True
            controller.talk_down()
        if state["held"] and source.position >= ends[state["turn"]]:
            state["held"] = False
            state["turn"] += 1
            controller.talk_up()
        turns = window.captions.turns()
        finals = [x for x in turns if x.final]
        last = turns[-1] if turns else None
        live = last is not None and not last.final and last.tentative.strip()
        if (len(finals) >= 3 and live) or state["ticks"] > 900:
            timer.stop()
            QGuiApplication.primaryScreen().grabWindow(window.winId()).save(out)
            print(f"saved {out}")
            controller.shut_down.connect(app.quit)
            window.close()

    timer = QTimer()
    timer.setInterval(100)
    timer.timeout.connect(step)
    timer.start()
    return app.exec()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "docs" / "screenshot.png")))
