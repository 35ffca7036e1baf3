"""What the window says in each state: loading, idle, listening; the read-only captions."""

from __future__ import annotations

from collections import Counter

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage, QPalette
from PySide6.QtWidgets import QApplication, QLabel

from desktop_rt.live.transcript_recorder import CaptionTurn
from desktop_rt.ui.bridge import ServerState
from desktop_rt.ui.widgets.caption_view import CaptionView


def test_the_loading_screen_does_not_ask_to_speak_before_the_model_is_ready(idle_app):
    """Issue 17: the loading screen already said "Hold Space… and speak"."""
    window, bridge = idle_app.window, idle_app.controller.bridge
    bridge.publish(ServerState("starting", "whisper-base", message="Loading the speech model…"))
    assert "Space" not in window.captions.placeholderText()
    assert "Loading" in window.captions.placeholderText()
    bridge.publish(ServerState("failed", "whisper-base", message="The model could not be loaded"))
    assert "Space" not in window.captions.placeholderText()
    assert "not available" in window.captions.placeholderText()


def test_hearing_speech_is_cleared_when_listening_stops(idle_app):
    """Issue 17: "hearing speech…" stayed after listening stopped."""
    window, controller = idle_app.window, idle_app.controller
    controller.listening_changed.emit(True)
    controller.bridge.speech.emit(True)
    assert window.speech_label.text() == "hearing speech…"
    controller.listening_changed.emit(False)
    assert window.speech_label.text() == ""


def test_read_only_captions_show_no_text_cursor(qtbot):
    """Issue 17: a text cursor showed in the read-only captions."""
    view = CaptionView()
    qtbot.addWidget(view)
    view.show_turn(CaptionTurn("a", 0, "Ever tried.", final=True))
    view.show()
    qtbot.waitExposed(view)
    view.setFocus()
    assert view.focusPolicy() & Qt.FocusPolicy.TabFocus  # reachable from the keyboard
    assert view.cursorWidth() == 0
    assert view.isReadOnly()


# A dark desktop palette as a KDE/GNOME dark theme hands it to Qt.
DARK_DESKTOP = {
    QPalette.ColorRole.Window: "#2a2e32",
    QPalette.ColorRole.WindowText: "#fcfcfc",
    QPalette.ColorRole.Base: "#1b1e20",
    QPalette.ColorRole.Text: "#fcfcfc",
    QPalette.ColorRole.Button: "#31363b",
    QPalette.ColorRole.ButtonText: "#fcfcfc",
    QPalette.ColorRole.Highlight: "#3daee9",
    QPalette.ColorRole.HighlightedText: "#fcfcfc",
    QPalette.ColorRole.Mid: "#1e2225",
}


def _luminance(color: QColor) -> float:
    def channel(v: float) -> float:
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * channel(color.redF())
        + 0.7152 * channel(color.greenF())
        + 0.0722 * channel(color.blueF())
    )


def _contrast(a: QColor, b: QColor) -> float:
    """WCAG 2 contrast ratio (an oracle of its own, independent of ui/theme.py)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


@pytest.fixture
def dark_desktop(qtbot):
    app = QApplication.instance()
    palette = QPalette(app.palette())
    for role, color in DARK_DESKTOP.items():
        palette.setColor(role, QColor(color))
    yield palette
    app.setPalette(QPalette())  # back to the platform's own


def text_contrast(image: QImage, label: QLabel) -> float:
    """Contrast between a label's background (its commonest colour) and its text (the pixel that
    differs most from that background) as drawn in ``image`` (a grab of an ancestor)."""
    top_left = label.mapTo(label.window(), label.rect().topLeft())
    colors = Counter(
        image.pixel(top_left.x() + x, top_left.y() + y)
        for x in range(label.width())
        for y in range(label.height())
    )
    background = QColor.fromRgb(colors.most_common(1)[0][0])
    return max(_contrast(QColor.fromRgb(c), background) for c in colors)


def test_status_panel_is_readable_under_a_dark_desktop_palette(idle_app, dark_desktop, qtbot):
    """Issue 17: under a dark system palette the status panel was unreadable."""
    window = idle_app.window
    QApplication.instance().setPalette(dark_desktop)  # the desktop switches to dark
    panel = window.status_panel
    panel.show_message("The history could not be saved.")
    qtbot.waitUntil(lambda: panel.message_label.isVisible())
    image = window.grab().toImage()
    labels = [label for label in panel.findChildren(QLabel) if label.isVisible() and label.text()]
    assert len(labels) >= 8
    ratios = {label.text()[:30]: text_contrast(image, label) for label in labels}
    assert min(ratios.values()) >= 4.5, ratios
