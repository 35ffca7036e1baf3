"""The caption overlay shows a line the user corrected in the window as corrected."""

from __future__ import annotations

from desktop_rt.live.transcript_recorder import CaptionTurn
from desktop_rt.ui.widgets.overlay import CORRECTIONS_KEPT, CaptionOverlay


def test_a_corrected_line_is_shown_corrected_now_and_on_later_updates(qtbot):
    overlay = CaptionOverlay()
    qtbot.addWidget(overlay)
    overlay.show_turn(CaptionTurn("a", 0, " and John Dashwud", final=True))
    overlay.apply_correction("a", "and John Dashwood")
    assert overlay.text == "and John Dashwood"
    # a later update of the same turn (its English line) keeps the correction
    overlay.show_turn(CaptionTurn("a", 0, " and John Dashwud", final=True, translation=" x"))
    assert overlay.text == "and John Dashwood"
    overlay.show_turn(CaptionTurn("b", 1, " had then", " leisure"))
    assert overlay.text == "had then leisure"


def test_correcting_another_line_leaves_the_shown_one_alone(qtbot):
    overlay = CaptionOverlay()
    qtbot.addWidget(overlay)
    overlay.show_turn(CaptionTurn("a", 0, " first line", final=True))
    overlay.show_turn(CaptionTurn("b", 1, " second line", " and more"))
    overlay.apply_correction("a", "First line")
    assert overlay.text == "second line and more"
    for n in range(CORRECTIONS_KEPT + 1):  # only recent corrections are kept
        overlay.apply_correction(f"old{n}", "text")
    overlay.show_turn(CaptionTurn("a", 0, " first line", final=True))
    assert overlay.text == "first line"
