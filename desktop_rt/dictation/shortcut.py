"""A global shortcut written as people write it: ``"ctrl+alt+space"``.

:func:`parse_shortcut` checks the text and returns a :class:`Shortcut`: the modifiers (a subset
of :data:`MODIFIERS`) and one key name (``"space"``, ``"f9"``, ``"d"``). Whether the key name
exists on the keyboard is the platform layer's question (``x11_hotkey``). Bad text raises
:class:`~desktop_rt.dictation.errors.DictationError` with a message for people.
"""

from __future__ import annotations

from dataclasses import dataclass

from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.settings import DEFAULT_SHORTCUT

__all__ = ["MODIFIERS", "Shortcut", "parse_shortcut", "DEFAULT_SHORTCUT"]

MODIFIERS = ("ctrl", "alt", "shift", "super")
_ALIASES = {
    "control": "ctrl",
    "ctl": "ctrl",
    "mod1": "alt",
    "meta": "super",
    "win": "super",
    "cmd": "super",
    "mod4": "super",
}


@dataclass(frozen=True)
class Shortcut:
    """``modifiers`` in the order of :data:`MODIFIERS`; ``key`` in lower case."""

    modifiers: tuple[str, ...]
    key: str

    def __str__(self) -> str:
        return "+".join((*(m.capitalize() for m in self.modifiers), self.key.capitalize()))


def parse_shortcut(text: str) -> Shortcut:
    """``"Ctrl+Alt+Space"`` -> ``Shortcut(("ctrl", "alt"), "space")``; raises DictationError."""
    parts = [p.strip().lower() for p in text.split("+")]
    if not text.strip() or any(not p for p in parts):
        raise DictationError(
            f"The dictation shortcut {text!r} is not valid: write it as modifiers and a key "
            "joined by '+', for example ctrl+alt+space."
        )
    names = [_ALIASES.get(p, p) for p in parts]
    *mods, key = names
    unknown = [m for m in mods if m not in MODIFIERS]
    if unknown:
        raise DictationError(
            f"The dictation shortcut {text!r} has {unknown[0]!r} where a modifier belongs "
            f"(one of {', '.join(MODIFIERS)})."
        )
    if key in MODIFIERS:
        raise DictationError(
            f"The dictation shortcut {text!r} ends in a modifier: add a key, e.g. {text}+space."
        )
    if not mods:
        raise DictationError(
            f"The dictation shortcut {text!r} has no modifier: a key alone would be taken from "
            "every application. Add ctrl, alt, shift or super."
        )
    return Shortcut(tuple(m for m in MODIFIERS if m in mods), key)
