"""Widgets on their own: captions, level meter, status panel, overlay, shortcuts."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication

from desktop_rt.engine.audio.sources import LOST, OPEN, SourceStatus
from desktop_rt.live.capture import LevelReading
from desktop_rt.live.transcript_recorder import CaptionTurn
from desktop_rt.ui.bridge import ServerState
from desktop_rt.ui.shortcuts import SHORTCUTS, help_text
from desktop_rt.ui.widgets.caption_view import CaptionView
from desktop_rt.ui.widgets.level_meter import LevelMeter
from desktop_rt.ui.widgets.overlay import CaptionOverlay
from desktop_rt.ui.widgets.status_panel import StatusPanel


def _formats(view: CaptionView, block_number: int) -> list[tuple[str, str, bool]]:
    """(text, colour, italic) runs of one paragraph."""
    block = view.document().findBlockByNumber(block_number)
    runs = []
    it = block.begin()
    while not it.atEnd():
        frag = it.fragment()
        fmt = frag.charFormat()
        runs.append((frag.text(), fmt.foreground().color().name(), fmt.fontItalic()))
        it += 1
    return runs


def test_captions_show_committed_full_and_tentative_dimmed(qtbot):
    view = CaptionView(font_size=22)
    qtbot.addWidget(view)
    view.show_turn(CaptionTurn("a", 0, "", "Ever tried"))
    view.show_turn(CaptionTurn("a", 0, "Ever", " tried. Ever"))
    runs = _formats(view, 0)
    assert [r[0] for r in runs] == ["Ever", " tried. Ever"]
    (_, full, full_italic), (_, dim, dim_italic) = runs
    assert full != dim and not full_italic and dim_italic
    view.show_turn(CaptionTurn("a", 0, "Ever tried.", "", final=True))
    view.show_turn(CaptionTurn("b", 1, "Fail", " better"))
    assert view.toPlainText() == "Ever tried.\nFail better"
    assert view.committed_text() == "Ever tried. Fail"
    assert view.font_size() == 22


def test_current_turn_is_set_apart_from_earlier_turns(qtbot):
    view = CaptionView()
    qtbot.addWidget(view)
    view.show_turn(CaptionTurn("a", 0, "First.", final=True))
    view.show_turn(CaptionTurn("b", 1, "Second", " one"))
    doc = view.document()
    first, second = doc.findBlockByNumber(0).blockFormat(), doc.findBlockByNumber(1).blockFormat()
    assert second.background().style() != first.background().style()
    assert second.topMargin() > first.topMargin()


def test_removed_and_empty_turns_leave_no_trace(qtbot):
    view = CaptionView()
    qtbot.addWidget(view)
    view.show_turn(CaptionTurn("x", 0, "", "   "))
    assert view.toPlainText() == ""
    view.show_turn(CaptionTurn("a", 0, "Kept."))
    view.show_turn(CaptionTurn("b", 1, "", "uh"))
    view.show_turn(CaptionTurn("c", 2, "Also kept."))
    view.show_turn(CaptionTurn("b", 1, "", "", removed=True))
    assert view.toPlainText() == "Kept.\nAlso kept."
    view.show_turn(CaptionTurn("c", 1, "Also kept, changed."))
    assert view.toPlainText() == "Kept.\nAlso kept, changed."


def test_auto_scroll_follows_until_the_user_scrolls_up(qtbot):
    view = CaptionView(font_size=18)
    qtbot.addWidget(view)
    view.resize(400, 200)
    view.show()
    qtbot.waitExposed(view)
    bar = view.verticalScrollBar()
    for n in range(40):
        view.show_turn(CaptionTurn(f"i{n}", n, f"Sentence number {n} of the test.", final=True))
    assert bar.maximum() > 0 and bar.value() == bar.maximum() and view.following
    bar.setValue(0)  # the user scrolls up to read
    assert not view.following
    view.show_turn(CaptionTurn("new", 40, "Another line arrives."))
    assert bar.value() == 0
    assert view._jump.isVisible()
    view.scroll_to_latest()
    view.show_turn(CaptionTurn("newer", 41, "And another."))
    assert view.following and bar.value() == bar.maximum()


def test_level_meter_repaints_from_its_timer_and_shows_the_threshold(qtbot):
    meter = LevelMeter(threshold=0.6)
    qtbot.addWidget(meter)
    meter.show()
    qtbot.waitExposed(meter)
    start = meter.repaints
    meter.set_reading(LevelReading(-20.0, 0.9, 1.0))
    assert meter.repaints == start  # setting a value does not paint
    qtbot.waitUntil(lambda: meter.repaints > start)
    assert meter.level == (60 - 20) / 60 and meter.speech == 0.9
    meter.set_threshold(0.3)
    assert meter.threshold == 0.3
    meter.set_reading(LevelReading(-200.0, None, 2.0))
    assert meter.level == 0.0 and meter.speech == 0.9  # no new probability: keep the last one
    image = meter.grab().toImage()
    assert image.width() > 0


def test_status_panel_shows_server_key_mic_clients_and_errors(qtbot):
    panel = StatusPanel()
    qtbot.addWidget(panel)
    panel.set_server(
        ServerState("ready", "whisper-base", "ws://127.0.0.1:8777/v1/realtime", 8777, "sekrit")
    )
    assert "ready" in panel.model_label.text() and "8777" in panel.server_label.text()
    assert "required" in panel.key_label.text() and not panel.copy_key.isHidden()
    panel.copy_url.click()
    assert QGuiApplication.clipboard().text() == "ws://127.0.0.1:8777/v1/realtime"
    panel.copy_key.click()
    assert QGuiApplication.clipboard().text() == "sekrit"
    panel.set_server(ServerState("ready", "whisper-base", "ws://x", 1, None))
    assert "not required" in panel.key_label.text() and panel.copy_key.isHidden()
    panel.set_mic(
        SourceStatus(LOST, "USB mic", "The microphone “USB mic” stopped delivering sound.")
    )
    assert "unavailable" in panel.mic_label.text() and "stopped delivering" in panel.message
    panel.set_mic(SourceStatus(OPEN, "USB mic"))
    assert "listening" in panel.mic_label.text() and panel.message == ""  # recovered: message gone
    panel.set_clients(2)
    assert "2 other programs" in panel.clients_label.text()
    panel.show_message("The model could not be loaded")
    panel.dismiss.click()
    assert panel.message == ""


def test_overlay_is_always_on_top_translucent_and_shows_the_newest_turn(qtbot):
    from PySide6.QtCore import Qt

    overlay = CaptionOverlay()
    qtbot.addWidget(overlay)
    assert overlay.windowFlags() & Qt.WindowType.WindowStaysOnTopHint
    assert overlay.testAttribute(Qt.WidgetAttribute.WA_TranslucentBackground)
    overlay.show_turn(CaptionTurn("a", 0, "Ever tried.", " Ever"))
    assert overlay.text == "Ever tried. Ever"
    overlay.show_turn(CaptionTurn("b", 1, "", "", removed=True))
    assert overlay.text == "Ever tried. Ever"
    overlay.show()
    assert not overlay.grab().toImage().isNull()


def test_every_shortcut_is_distinct_and_documented():
    keys = [s.keys for s in SHORTCUTS.values()]
    assert len(keys) == len(set(keys))
    assert "Space" in help_text() and all(k in help_text() for k in keys)


def test_caption_view_keeps_only_the_last_turns_on_screen(qtbot):
    view = CaptionView(max_turns=3)
    qtbot.addWidget(view)
    for i in range(6):
        view.show_turn(CaptionTurn(f"t{i}", i, f"Turn {i}.", final=True))
    assert view.toPlainText() == "Turn 3.\nTurn 4.\nTurn 5."
    assert [t.item_id for t in view.turns()] == ["t3", "t4", "t5"]
    view.show_turn(
        CaptionTurn("t1", 1, "Turn 1, late update.", final=True)
    )  # scrolled off: stays off
    view.show_turn(CaptionTurn("t4", 4, "Turn 4 revised.", final=True))
    assert view.toPlainText() == "Turn 3.\nTurn 4 revised.\nTurn 5."
    view.show_turn(CaptionTurn("t6", 6, "Turn", " six"))
    assert view.committed_text() == "Turn 4 revised. Turn 5. Turn"
    current = view.document().findBlockByNumber(2).blockFormat()
    assert current.topMargin() > view.document().findBlockByNumber(1).blockFormat().topMargin()


def _paragraph_lines(view: CaptionView, number: int) -> int:
    block = view.document().findBlockByNumber(number)
    view.document().documentLayout().blockBoundingRect(block)
    return block.layout().lineCount()


def test_tentative_text_never_makes_the_captions_jump_more_than_a_line(qtbot):
    """Issue 17: a long tentative run drew three lines at once and made the view jump."""
    view = CaptionView(font_size=18)
    qtbot.addWidget(view)
    view.resize(420, 300)
    view.show()
    qtbot.waitExposed(view)
    view.show_turn(CaptionTurn("a", 0, "Earlier turn.", final=True))
    view.show_turn(CaptionTurn("b", 1, "", " " + "word " * 60))
    assert _paragraph_lines(view, 1) == 1
    lines = [1]
    committed = ""
    for n in range(12):
        committed += " said"
        view.show_turn(CaptionTurn("b", 1, committed, " " + "word " * (60 + n)))
        lines.append(_paragraph_lines(view, 1))
    assert all(b - a <= 1 for a, b in zip(lines, lines[1:], strict=False)), lines
    assert max(lines) >= 2  # the tentative words still show, a line at a time
    view.show_turn(CaptionTurn("b", 1, committed + " done.", "", final=True))
    assert view.document().findBlockByNumber(1).text().endswith("said done.")
