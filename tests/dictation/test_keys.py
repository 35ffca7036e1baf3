"""Characters to X keysyms."""

from __future__ import annotations

import pytest

from desktop_rt.dictation.keys import RETURN, TAB, keysym_for


def test_latin1_is_its_own_keysym_and_the_rest_is_unicode():
    assert keysym_for("a") == 0x61 and keysym_for(" ") == 0x20 and keysym_for("é") == 0xE9
    assert keysym_for("ж") == 0x01000436 and keysym_for("€") == 0x010020AC
    assert (keysym_for("\n"), keysym_for("\t")) == (RETURN, TAB)


@pytest.mark.parametrize("bad", ["\x07", "\x7f", "ab", ""])
def test_control_characters_and_strings_are_refused(bad):
    with pytest.raises(ValueError):
        keysym_for(bad)
