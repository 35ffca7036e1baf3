"""Honest status: a microphone that stops delivering without closing is reported, with Retry."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QElapsedTimer, QTimer

from desktop_rt.config import HANDS_FREE
from desktop_rt.engine.audio.sources import SILENT
from tests.support.capture_support import StallingFileSource
from tests.support.clips import DATA

pytestmark = pytest.mark.slow


def test_a_stalled_microphone_is_reported_in_window_and_tray_and_retry_reopens_it(make_app, qtbot):
    """Issue 17: for 8 s the meter froze and no warning appeared."""
    source = StallingFileSource(DATA / "beckett.wav", pace=1.0, name="USB mic")
    app = make_app(source, mode=HANDS_FREE)
    controller, tray, panel = app.controller, app.tray, app.window.status_panel
    qtbot.waitUntil(lambda: "listening" in panel.mic_label.text(), timeout=10_000)
    ticks: list[int] = []
    clock = QElapsedTimer()
    probe = QTimer()
    probe.setInterval(20)
    probe.timeout.connect(lambda: ticks.append(clock.elapsed()))
    clock.start()
    probe.start()
    source.stall()
    with qtbot.waitSignal(
        controller.bridge.mic_status, check_params_cb=lambda s: s.state == SILENT, timeout=5_000
    ):
        pass
    probe.stop()
    assert "microphone silent: no audio from usb mic" in panel.message.lower()
    assert "silent" in panel.mic_label.text()
    assert not panel.retry_button.isHidden()
    assert "no audio from USB mic" in tray.toolTip() and tray.retry_action.isVisible()
    assert controller.listening  # the session stays; the text so far is kept
    gaps = [b - a for a, b in zip(ticks, ticks[1:], strict=False)]
    assert max(gaps) < 500  # the window kept running

    source.resume()  # the driver comes back by itself
    qtbot.waitUntil(lambda: panel.message == "", timeout=5_000)
    assert "listening" in panel.mic_label.text() and "no audio" not in tray.toolTip()

    source.stall()
    qtbot.waitUntil(lambda: not panel.retry_button.isHidden(), timeout=5_000)
    first = controller.live
    panel.retry_button.click()  # closes the source on a helper thread, then opens it again
    source.resume()
    qtbot.waitUntil(lambda: controller.listening and controller.live is not first, timeout=15_000)
    qtbot.waitUntil(lambda: "listening" in panel.mic_label.text(), timeout=10_000)
    assert panel.message == ""  # "Reopening the microphone…" went with the new stream
    assert "no audio" not in tray.toolTip() and not tray.retry_action.isVisible()
