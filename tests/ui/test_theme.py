"""Themes: the system's dark palette stays readable, high contrast, the overlay and the font follow."""

from __future__ import annotations

from dataclasses import replace

import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from desktop_rt.config import THEMES
from desktop_rt.ui.theme import contrast_ratio, palette_for, theme_colors
from tests.ui.test_window_states import DARK_DESKTOP


@pytest.fixture
def dark_desktop(qtbot):
    palette = QPalette(QApplication.instance().palette())
    for role, color in DARK_DESKTOP.items():
        palette.setColor(role, QColor(color))
    return palette


@pytest.mark.parametrize("theme", THEMES)
def test_every_theme_keeps_text_readable(theme, dark_desktop):
    palette = palette_for(theme) or dark_desktop
    colors = theme_colors(palette, theme == "high_contrast")
    pairs = {
        "text": (colors.text, colors.window),
        "secondary": (colors.secondary, colors.panel),
        "error": (colors.danger, colors.panel),
        "accent": (colors.accent_text, colors.accent),
        "talk": (colors.talk_text, colors.talk_bg),
        "overlay": (colors.overlay_text, colors.overlay_bg),
    }
    for name, (fg, bg) in pairs.items():
        assert contrast_ratio(QColor(fg), QColor(bg)) >= 4.5, (theme, name, fg, bg)


def test_high_contrast_theme_font_choice_and_the_overlay_follow_the_settings(idle_app, qtbot):
    window, controller = idle_app.window, idle_app.controller
    family = QApplication.font().family()
    settings = controller.settings
    controller.apply_settings(
        settings.with_group(
            appearance=replace(settings.appearance, theme="high_contrast", font_family=family)
        )
    )
    try:
        palette = QApplication.instance().palette()
        assert palette.color(QPalette.ColorRole.Window).name() == "#000000"
        assert palette.color(QPalette.ColorRole.WindowText).name() == "#ffff00"
        assert window.overlay.colors[:2] == ("#000000", "#ffff00")
        assert window.captions.font().family() == family
        image = window.status_panel.grab().toImage()
        assert QColor.fromRgb(image.pixel(2, image.height() - 2)).name() == "#000000"
    finally:
        controller.apply_settings(settings)
    assert window.overlay.colors[1] != "#ffff00"


def test_error_lines_are_in_the_error_colour_in_every_view(idle_app, qtbot):
    window = idle_app.window
    colors = window.theme.colors
    window.history._set_status("The history could not be read.", error=True)
    window.status_panel.show_message("Disk full.")
    for label in (window.history.status, window.status_panel.message_label):
        label.show()
        assert label.palette().color(label.foregroundRole()).name() == colors.danger
    window.history._set_status("Saved.", error=False)
    label = window.history.status
    assert label.palette().color(label.foregroundRole()).name() == colors.secondary
