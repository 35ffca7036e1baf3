"""Themes: the system's light or dark palette, fixed light and dark ones, and high contrast.

:class:`ThemeManager` sets the application palette for a theme (for "system" it leaves the
desktop's own palette in place and follows its changes), then fills ``resources/app.qss`` with
:class:`ThemeColors` derived from that palette, so every colour the style sheet and the painted
widgets use (the overlay, the level meter) comes from the palette in force. Colours for text are
checked against their background with :func:`contrast_ratio` (WCAG 2) and adjusted to reach 4.5;
so are the lighter words the recognizer was unsure of (:func:`uncertain_color`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from importlib import resources
from string import Template

from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QWidget

__all__ = [
    "ThemeColors",
    "ThemeManager",
    "contrast_ratio",
    "readable",
    "uncertain_color",
    "palette_for",
    "theme_colors",
    "stylesheet",
]

_R = QPalette.ColorRole
_LIGHT = {
    _R.Window: "#f5f6f8", _R.WindowText: "#1d2330", _R.Base: "#ffffff",
    _R.AlternateBase: "#eef1f5", _R.Text: "#1d2330", _R.Button: "#e9ecf1",
    _R.ButtonText: "#1d2330", _R.Highlight: "#3462c4", _R.HighlightedText: "#ffffff",
    _R.PlaceholderText: "#5f6878", _R.Mid: "#9aa3b2", _R.Midlight: "#dfe3ea",
    _R.Dark: "#7d8699", _R.Light: "#ffffff", _R.Shadow: "#4a4f5a", _R.ToolTipBase: "#ffffdc",
    _R.ToolTipText: "#000000", _R.Link: "#2a5db0", _R.BrightText: "#ffffff",
}  # fmt: skip
_DARK = {
    _R.Window: "#1f2228", _R.WindowText: "#e6e9ef", _R.Base: "#15171b",
    _R.AlternateBase: "#1b1e23", _R.Text: "#e6e9ef", _R.Button: "#2b2f37",
    _R.ButtonText: "#e6e9ef", _R.Highlight: "#3a66c4", _R.HighlightedText: "#ffffff",
    _R.PlaceholderText: "#a3aab8", _R.Mid: "#5a606b", _R.Midlight: "#343842",
    _R.Dark: "#101215", _R.Light: "#3c414b", _R.Shadow: "#000000", _R.ToolTipBase: "#2b2f37",
    _R.ToolTipText: "#e6e9ef", _R.Link: "#8ab4ff", _R.BrightText: "#ffffff",
}  # fmt: skip
_HIGH_CONTRAST = {
    _R.Window: "#000000", _R.WindowText: "#ffff00", _R.Base: "#000000",
    _R.AlternateBase: "#141400", _R.Text: "#ffff00", _R.Button: "#000000",
    _R.ButtonText: "#ffff00", _R.Highlight: "#ffff00", _R.HighlightedText: "#000000",
    _R.PlaceholderText: "#ffff00", _R.Mid: "#ffff00", _R.Midlight: "#000000",
    _R.Dark: "#ffff00", _R.Light: "#000000", _R.Shadow: "#ffff00", _R.ToolTipBase: "#000000",
    _R.ToolTipText: "#ffff00", _R.Link: "#00ffff", _R.BrightText: "#ffffff",
}  # fmt: skip
_PALETTES = {"light": _LIGHT, "dark": _DARK, "high_contrast": _HIGH_CONTRAST}
_DISABLED = {"light": "#7b8290", "dark": "#8a909c", "high_contrast": "#c8c800"}


def _luminance(color: QColor) -> float:
    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * channel(color.redF())
        + 0.7152 * channel(color.greenF())
        + 0.0722 * channel(color.blueF())
    )


def contrast_ratio(a: QColor, b: QColor) -> float:
    """WCAG 2 contrast ratio of two opaque colours (1 to 21)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _mix(a: QColor, b: QColor, t: float) -> QColor:
    """``a`` moved ``t`` (0..1) of the way towards ``b``."""
    return QColor.fromRgbF(
        a.redF() + (b.redF() - a.redF()) * t,
        a.greenF() + (b.greenF() - a.greenF()) * t,
        a.blueF() + (b.blueF() - a.blueF()) * t,
    )


def readable(color: QColor, background: QColor, minimum: float = 4.5) -> QColor:
    """``color``, moved towards black or white (whichever contrasts more) until it is readable."""
    target = QColor("#000000") if _luminance(background) > 0.18 else QColor("#ffffff")
    for step in range(11):
        candidate = _mix(color, target, step / 10)
        if contrast_ratio(candidate, background) >= minimum:
            return candidate
    return target


def uncertain_color(text: QColor, background: QColor) -> QColor:
    """Lighter than ``text`` for words the recognizer was unsure of, still readable (4.5:1)
    on ``background``: a third of the way to the background, pulled back where that is too faint."""
    return readable(_mix(text, background, 0.34), background)


def palette_for(theme: str) -> QPalette | None:
    """The palette of a fixed theme; None for "system" (the desktop's own)."""
    roles = _PALETTES.get(theme)
    if roles is None:
        return None
    palette = QPalette()
    for role, value in roles.items():
        palette.setColor(role, QColor(value))
    disabled = QColor(_DISABLED[theme])
    for role in (_R.WindowText, _R.Text, _R.ButtonText, _R.PlaceholderText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, disabled)
    return palette


@dataclass(frozen=True)
class ThemeColors:
    """Colours in force, as ``#rrggbb`` names (the style sheet's ``$fields``)."""

    window: str
    text: str
    secondary: str
    panel: str
    border: str
    button: str
    button_text: str
    accent: str
    accent_text: str
    accent_border: str
    accent_on_window: str
    danger: str
    danger_bg: str
    talk_bg: str
    talk_text: str
    disabled: str
    focus: str
    overlay_bg: str
    overlay_text: str
    overlay_dim: str
    dark: bool
    high_contrast: bool


def theme_colors(palette: QPalette, high_contrast: bool = False) -> ThemeColors:
    """The colours for widgets and the style sheet, from ``palette``."""
    window, text = palette.color(_R.Window), palette.color(_R.WindowText)
    accent = palette.color(_R.Highlight)
    dark = _luminance(window) < 0.18
    panel = window if high_contrast else _mix(window, text, 0.05)
    talk_bg = window if high_contrast else _mix(panel, accent, 0.18)
    hc_overlay = ("#000000", "#ffff00", "#ffff00")
    dark_overlay = ("#0c0e14", "#ffffff", "#b4bac4")
    light_overlay = ("#fafbfc", "#10131a", "#4c5360")
    overlay = hc_overlay if high_contrast else dark_overlay if dark else light_overlay
    return ThemeColors(
        window=window.name(),
        text=text.name(),
        secondary=readable(readable(_mix(text, panel, 0.4), panel), window).name(),
        panel=panel.name(),
        border=(text if high_contrast else _mix(window, text, 0.3)).name(),
        button=palette.color(_R.Button).name(),
        button_text=palette.color(_R.ButtonText).name(),
        accent=accent.name(),
        accent_text=readable(palette.color(_R.HighlightedText), accent).name(),
        accent_border=(text if high_contrast else accent.darker(130)).name(),
        accent_on_window=readable(accent, window).name(),
        danger=readable(QColor("#c8463d"), panel).name(),
        danger_bg=(window if high_contrast else _mix(window, QColor("#c8463d"), 0.15)).name(),
        talk_bg=talk_bg.name(),
        talk_text=readable(accent, talk_bg).name(),
        disabled=palette.color(QPalette.ColorGroup.Disabled, _R.WindowText).name(),
        focus=text.name() if high_contrast or dark else accent.darker(140).name(),
        overlay_bg=overlay[0],
        overlay_text=overlay[1],
        overlay_dim=overlay[2],
        dark=dark,
        high_contrast=high_contrast,
    )


def stylesheet(colors: ThemeColors) -> str:
    """``resources/app.qss`` with the ``$fields`` of ``colors`` filled in."""
    template = resources.files("desktop_rt").joinpath("resources", "app.qss")
    values = {f.name: str(getattr(colors, f.name)) for f in fields(colors)}
    values["focus_width"] = "3px" if colors.high_contrast else "2px"
    return Template(template.read_text(encoding="utf-8")).substitute(values)


class ThemeManager(QObject):
    """Applies a theme to the application; ``changed(ThemeColors)`` after every restyle.

    It watches ``window`` (not the whole application: a Python filter on every event would
    take the interpreter lock for each one) for the desktop's palette changes.
    """

    changed = Signal(object)

    def __init__(self, window: QWidget):
        super().__init__(window)
        self._app = QApplication.instance()
        self._window = window
        self.theme = "system"
        self._applying = False
        self.colors = theme_colors(self._app_palette())
        window.installEventFilter(self)

    def _app_palette(self) -> QPalette:
        return self._app.palette() if isinstance(self._app, QApplication) else QPalette()

    def apply(self, theme: str) -> None:
        """Use ``theme`` ("system", "light", "dark" or "high_contrast") from now on."""
        self.theme = theme
        app = self._app
        if isinstance(app, QApplication):
            self._applying = True
            try:
                palette = palette_for(theme)
                # An empty palette resolves to the desktop's own and keeps following it.
                app.setPalette(palette if palette is not None else QPalette())
            finally:
                self._applying = False
        self.restyle()

    def restyle(self) -> None:
        self.colors = theme_colors(self._app_palette(), self.theme == "high_contrast")
        if isinstance(self._app, QApplication):
            self._app.setStyleSheet(stylesheet(self.colors))
        self.changed.emit(self.colors)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt naming
        if (
            event.type() == QEvent.Type.ApplicationPaletteChange
            and watched is self._window
            and self.theme == "system"
            and not self._applying
        ):
            self.restyle()  # the desktop switched between light and dark
        return False
