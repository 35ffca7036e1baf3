"""Take docs/theme-light.png, theme-dark.png and theme-high-contrast.png under Xvfb.

    .venv/bin/python docs/screenshots.py [out_dir]

For each theme this starts its own Xvfb and runs the real app in a child process (so every
theme starts from a fresh QApplication): the embedded model loads, the window listens
hands-free to a silent file-backed microphone, and three caption turns (two committed, one
still tentative) are set through :meth:`CaptionView.show_turn`, the widget's public API. The
window is grabbed once it is listening. Throwaway data and config folders; nothing is saved.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
THEMES = {"light": "theme-light", "dark": "theme-dark", "high_contrast": "theme-high-contrast"}
TURNS = [
    ("Ever tried. Ever failed. No matter.", ""),
    ("Try again. Fail again. Fail better.", ""),
    ("The colours follow the theme", " you chose"),
]


def shoot(theme: str, out: Path) -> int:
    """In the child: run the app in ``theme`` and save the window to ``out``."""
    import numpy as np
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from desktop_rt.config import (
        HANDS_FREE,
        AppearanceSettings,
        AudioSettings,
        CaptionSettings,
        ServerSettings,
        Settings,
    )
    from desktop_rt.engine.audio.sources import FileAudioSource
    from desktop_rt.live.transcript_recorder import CaptionTurn
    from desktop_rt.ui.app import build_app

    settings = Settings().with_group(
        audio=AudioSettings(mode=HANDS_FREE),
        captions=CaptionSettings(font_size=20),
        appearance=AppearanceSettings(theme=theme),  # type: ignore[arg-type]
        server=ServerSettings(port=0),
    )
    app = QApplication(sys.argv[:1])
    app.setApplicationName("desktop-rt")
    app.setQuitOnLastWindowClosed(False)
    silence = FileAudioSource(np.zeros(16000 * 600, dtype=np.float32), name="Built-in microphone")
    desktop = build_app(
        settings=settings,
        source_factory=lambda _s: silence,
        history_path=Path(tempfile.mkdtemp(prefix="desktop-rt-shot-")) / "history.sqlite3",
        persist_settings=False,
    )
    window, controller = desktop.window, desktop.controller
    window.resize(900, 560)
    desktop.start()
    started = time.monotonic()

    def step() -> None:
        if not controller.listening and time.monotonic() - started < 120:
            return
        timer.stop()
        for index, (committed, tentative) in enumerate(TURNS):
            final = not tentative
            window.captions.show_turn(
                CaptionTurn(f"shot{index}", index, committed, tentative, final)
            )
        QTimer.singleShot(500, grab)

    def grab() -> None:
        ok = window.grab().save(str(out))
        print(f"{'saved' if ok else 'could not save'} {out} (listening: {controller.listening})")
        controller.shut_down.connect(lambda: app.exit(0 if ok and controller.listening else 1))
        window.close()

    timer = QTimer()
    timer.setInterval(100)
    timer.timeout.connect(step)
    timer.start()
    code = app.exec()
    if controller.stopped.is_set():
        desktop.dispose()
    return code


def free_display() -> int:
    return next(n for n in range(170, 200) if not Path(f"/tmp/.X11-unix/X{n}").exists())


def main(out_dir: Path) -> int:
    out_dir.mkdir(parents=True, exist_ok=True)
    failures = 0
    for theme, name in THEMES.items():
        number = free_display()
        xvfb = subprocess.Popen(["Xvfb", f":{number}", "-screen", "0", "1280x900x24"])
        try:
            socket, deadline = Path(f"/tmp/.X11-unix/X{number}"), time.monotonic() + 10
            while not socket.exists() and time.monotonic() < deadline:
                time.sleep(0.05)  # another process: nothing to wait on but its socket
            env = {**os.environ, "DISPLAY": f":{number}", "QT_QPA_PLATFORM": "xcb"}
            scratch = tempfile.mkdtemp(prefix="desktop-rt-shot-")
            env.setdefault("DESKTOP_RT_DATA_DIR", f"{scratch}/data")
            env.setdefault("DESKTOP_RT_CONFIG_DIR", f"{scratch}/config")
            child = [sys.executable, __file__, "--shoot", theme, str(out_dir / f"{name}.png")]
            failures += subprocess.run(child, env=env, cwd=ROOT, timeout=300).returncode != 0
        finally:
            xvfb.terminate()
            xvfb.wait(10)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    if sys.argv[1:2] == ["--shoot"]:
        sys.exit(shoot(sys.argv[2], Path(sys.argv[3])))
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs"))
