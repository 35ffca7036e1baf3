"""Characters -> X keysyms, with no X connection: what ``x11_typer`` presses for each character.

Latin-1 characters are their own keysyms; newline and tab are Return and Tab; every other
Unicode character is ``0x01000000 + code point`` (the X11 Unicode keysym range).
"""

from __future__ import annotations

__all__ = ["keysym_for", "RETURN", "TAB"]

RETURN = 0xFF0D
TAB = 0xFF09
_UNICODE_KEYSYM = 0x01000000
_SPECIAL = {"\n": RETURN, "\t": TAB}


def keysym_for(char: str) -> int:
    """The keysym that types ``char`` (one character); raises ValueError for control codes."""
    if len(char) != 1:
        raise ValueError("keysym_for takes one character")
    special = _SPECIAL.get(char)
    if special is not None:
        return special
    code = ord(char)
    if code < 0x20 or 0x7F <= code < 0xA0:
        raise ValueError(f"no key types the control character {code:#x}")
    if code <= 0xFF:
        return code
    return _UNICODE_KEYSYM | code
