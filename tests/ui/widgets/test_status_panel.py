"""The status panel's "captions N s behind" line: shown only while captions are over 2 s late."""

from __future__ import annotations

from desktop_rt.ui.widgets.status_panel import LAG_SHOWN_SECONDS, StatusPanel


def test_the_lag_line_shows_only_past_two_seconds(qtbot):
    panel = StatusPanel()
    qtbot.addWidget(panel)
    panel.show()
    assert not panel.lag_label.isVisible()
    panel.set_lag(LAG_SHOWN_SECONDS)  # normal streaming: nothing shown
    assert not panel.lag_label.isVisible()
    panel.set_lag(3.4)
    assert panel.lag_label.isVisible()
    assert "captions 3 s behind" in panel.lag_label.text()
    assert panel.lag_label.accessibleName() == "Caption delay"
    panel.set_lag(0.0)
    assert not panel.lag_label.isVisible() and panel.lag_label.text() == ""
