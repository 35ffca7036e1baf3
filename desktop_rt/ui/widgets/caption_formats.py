"""How caption text looks: the character formats of committed, tentative, uncertain, translated
and speaker text, from the palette in force, and :func:`insert_words`, which writes committed
words with the ones the recognizer was unsure of shaded.

A word is shaded (:class:`Shading`) when its probability is below the threshold: lighter (still
4.5:1 on the background, :func:`~desktop_rt.ui.theme.uncertain_color`) and underlined with
dots, so it reads apart from tentative words (dimmer, italic) without colour alone. Used by the
live captions and the history's turn list.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtGui import QColor, QFont, QPalette, QTextCharFormat, QTextCursor

from desktop_rt.history.confidence import is_uncertain
from desktop_rt.ui.theme import uncertain_color

__all__ = [
    "Shading",
    "TRANSLATION_SCALE",
    "committed_format",
    "tentative_format",
    "uncertain_format",
    "translation_format",
    "speaker_format",
    "insert_words",
]

TRANSLATION_SCALE = 0.85
"""The English line's size, relative to the captions' own."""
_SPACES = re.compile(r"(\s+)")


@dataclass(frozen=True)
class Shading:
    """Shade words below ``threshold`` when ``enabled`` (the captions settings)."""

    enabled: bool = True
    threshold: float = 0.5


def committed_format(palette: QPalette) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(palette.color(QPalette.ColorRole.Text))
    return fmt


def tentative_format(palette: QPalette) -> QTextCharFormat:
    fmt = QTextCharFormat()
    text = palette.color(QPalette.ColorRole.Text)
    base = palette.color(QPalette.ColorRole.Base)
    dim = QColor(  # about halfway between the text and the background: clearly secondary, still legible
        (text.red() * 9 + base.red() * 11) // 20,
        (text.green() * 9 + base.green() * 11) // 20,
        (text.blue() * 9 + base.blue() * 11) // 20,
    )
    fmt.setForeground(dim)
    fmt.setFontItalic(True)
    return fmt


def uncertain_format(palette: QPalette) -> QTextCharFormat:
    fmt = QTextCharFormat()
    text = palette.color(QPalette.ColorRole.Text)
    fmt.setForeground(uncertain_color(text, palette.color(QPalette.ColorRole.Base)))
    fmt.setFontUnderline(True)
    fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.DotLine)
    fmt.setUnderlineColor(text)
    fmt.setToolTip("The recogniser was unsure of this word.")
    return fmt


def translation_format(
    palette: QPalette, points: float, tentative: bool = False
) -> QTextCharFormat:
    fmt = tentative_format(palette) if tentative else QTextCharFormat()
    if not tentative:
        text = palette.color(QPalette.ColorRole.Text)
        base = palette.color(QPalette.ColorRole.Base)
        fmt.setForeground(  # muted, well above the tentative words' contrast
            QColor(
                (text.red() * 3 + base.red()) // 4,
                (text.green() * 3 + base.green()) // 4,
                (text.blue() * 3 + base.blue()) // 4,
            )
        )
    fmt.setFontPointSize(max(6.0, points * TRANSLATION_SCALE))
    return fmt


def speaker_format(palette: QPalette) -> QTextCharFormat:
    fmt = committed_format(palette)
    fmt.setFontWeight(QFont.Weight.Bold)
    return fmt


def insert_words(
    cursor: QTextCursor,
    text: str,
    probabilities: Sequence[float | None],
    palette: QPalette,
    shading: Shading,
) -> None:
    """Insert ``text`` at ``cursor``; its words below the threshold shaded (``probabilities``
    holds one per word of ``text``; any other count shades nothing)."""
    plain = committed_format(palette)
    words = text.split()
    if not shading.enabled or len(probabilities) != len(words):
        cursor.insertText(text, plain)
        return
    runs: list[tuple[str, bool]] = []  # consecutive pieces of one look, inserted at once
    index = 0
    for piece in _SPACES.split(text):
        if not piece:
            continue
        shaded = not piece.isspace() and is_uncertain(probabilities[index], shading.threshold)
        index += 0 if piece.isspace() else 1
        if runs and runs[-1][1] == shaded:
            runs[-1] = (runs[-1][0] + piece, shaded)
        else:
            runs.append((piece, shaded))
    unsure = uncertain_format(palette)
    for run, shaded in runs:
        cursor.insertText(run, unsure if shaded else plain)
