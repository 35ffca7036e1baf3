"""A session's respellings applied to the committed text its prompt is built from: :func:`respell`.

Whisper copies the spelling nearest its prompt's end, so a word the user corrected (taught as a
keyword) is still written the old way while the committed text before the window spells it so.
:func:`respell` rewrites each ``old`` as ``new`` in such text: whole words only (a letter, digit,
``_`` or ``-`` on either side, or an apostrophe before, is part of the word: "Dashwud's" is
rewritten, "Dashwudson" and "ill-disposed" are not), in any case, the words of a multiword
``old`` apart by any whitespace; the punctuation around stays. An occurrence in capitals is
written in capitals, and one that starts with a capital ``old`` did not have (a sentence's first
word) keeps it; otherwise ``new`` is written as taught. Respellings apply oldest first, so a
newer one sees what an older one wrote. Pure text: the words already sent are never touched.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache, partial

from desktop_rt.engine.protocol.events import Respelling

__all__ = ["respell"]


@lru_cache(maxsize=256)
def _pattern(old: str) -> re.Pattern[str]:
    words = r"\s+".join(re.escape(w) for w in old.split())
    return re.compile(rf"(?<![\w'\u2019-]){words}(?![\w-])", re.IGNORECASE)


def _cased(respelling: Respelling, match: re.Match[str]) -> str:
    """``respelling.new`` in the case ``match`` was written in (see the module docstring)."""
    found, old, new = match.group(0), respelling.old, respelling.new
    letters = [c for c in found if c.isalpha()]
    if len(letters) > 1 and found.isupper() and not old.isupper():
        return new.upper()
    if found[:1].isupper() and not old[:1].isupper():
        return new[:1].upper() + new[1:]
    return new


def respell(text: str, respellings: Sequence[Respelling]) -> str:
    """``text`` with every whole occurrence of each ``old`` written ``new``."""
    for respelling in respellings:
        text = _pattern(respelling.old).sub(partial(_cased, respelling), text)
    return text
