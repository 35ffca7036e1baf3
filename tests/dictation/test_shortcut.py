"""Shortcuts as people write them, and clear errors for the ones that cannot work."""

from __future__ import annotations

import pytest

from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.shortcut import DEFAULT_SHORTCUT, Shortcut, parse_shortcut


def test_the_default_and_aliases_parse():
    assert parse_shortcut(DEFAULT_SHORTCUT) == Shortcut(("ctrl", "alt"), "space")
    assert parse_shortcut(" Alt + Control + F9 ") == Shortcut(("ctrl", "alt"), "f9")
    assert parse_shortcut("win+shift+d") == Shortcut(("shift", "super"), "d")
    assert str(parse_shortcut("ctrl+alt+space")) == "Ctrl+Alt+Space"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "not valid"),
        ("ctrl++space", "not valid"),
        ("hyper+space", "where a modifier belongs"),
        ("ctrl+alt", "ends in a modifier"),
        ("space", "no modifier"),
    ],
)
def test_bad_shortcuts_say_what_is_wrong(text, says):
    with pytest.raises(DictationError, match=says):
        parse_shortcut(text)
