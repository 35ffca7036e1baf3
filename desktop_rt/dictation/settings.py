"""Dictation's settings group, a leaf module so ``desktop_rt.config`` can hold it (as it holds
the engine's VAD settings type) without importing the rest of dictation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "DictationSettings",
    "Trigger",
    "HOLD",
    "TOGGLE",
    "DEFAULT_SHORTCUT",
    "TypingMode",
    "TYPE",
    "PASTE",
]

Trigger = Literal["hold", "toggle"]
HOLD: Trigger = "hold"
TOGGLE: Trigger = "toggle"
TypingMode = Literal["type", "paste"]
TYPE: TypingMode = "type"
PASTE: TypingMode = "paste"
DEFAULT_SHORTCUT = "ctrl+alt+space"


@dataclass(frozen=True)
class DictationSettings:
    """Dictation into any app (docs/design/dictation.md): a global shortcut types the words."""

    enabled: bool = False
    shortcut: str = DEFAULT_SHORTCUT
    """Modifiers and a key joined by '+' (``desktop_rt.dictation.shortcut`` checks it)."""
    trigger: Trigger = HOLD
    """"hold": dictate while the shortcut is held; "toggle": a tap starts, the next stops."""
    preview: bool = True
    """Show the tentative words in a small on-top window while dictating."""
    typing: TypingMode = TYPE
    """"type": key presses (XTest); "paste": through the clipboard and Ctrl+V, for apps where
    typing is slow or drops characters; the user's clipboard is put back (X11 only)."""
    at_turn_end: bool = False
    """Type each dictated turn once, when it ends: its completed text (the turn heard whole,
    as accurate as offline recognition), instead of its words as they are committed."""
