"""Speech a segment's last pass skipped and an earlier pass heard: :func:`restore_skipped`.

A decoder sometimes jumps a stretch of speech and starts the next word where the stretch began
(the 10 dB stream: "when a conference administrators can join", "administrators" over 1.86 s,
where an earlier pass heard "is locked only conference administrators"). A segment's last pass
is committed without agreement, so such a stretch was lost at the endpoint. Here each earlier
hypothesis is aligned with the last one by word; a stretch only the earlier one has, followed
by a word both have that the last pass starts within the stretch, is put back before that word.
A stretch the last pass wrote as other words, or whose time the last pass leaves to the words
before it, is not a skip: the last pass, which heard the whole window, stands.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.spelling import normalize_word

__all__ = ["restore_skipped"]

_COVERS = 0.05  # a word starting this close after a lone skipped word's start covers it


def restore_skipped(words: Sequence[Word], earlier: Sequence[Sequence[Word]]) -> list[Word]:
    """``words`` (a last pass, after the commit point) with what each of the ``earlier``
    hypotheses (newest first, after the same point) heard in a stretch it skipped."""
    out = list(words)
    for hypothesis in earlier:
        out = _restored(out, list(hypothesis))
    return out


def _restored(last: list[Word], earlier: list[Word]) -> list[Word]:
    a = [normalize_word(w.text) for w in earlier]
    b = [normalize_word(w.text) for w in last]
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    out: list[Word] = []
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag == "delete" and k + 1 < len(ops) and ops[k + 1][0] == "equal":
            anchor = ops[k + 1][3]
            gone = earlier[i1:i2]
            if _skipped_over(gone, last[anchor]):
                placed = _placed(gone, out[-1].end if out else gone[0].start, last[anchor].end)
                out += placed
                w = last[anchor]
                last[anchor] = Word(w.text, max(w.start, placed[-1].end), w.end, w.probability)
            continue
        out += last[j1:j2]
    return out


def _skipped_over(gone: list[Word], anchor: Word) -> bool:
    """Whether a pass that wrote ``anchor`` right after where ``gone`` was skipped ``gone``:
    whole written words, the anchor starting within them (by their middle; a lone word, by
    its start)."""
    if not gone[0].text[:1].isspace() or not anchor.text[:1].isspace():
        return False
    if len(gone) == 1:
        return anchor.start <= gone[0].start + _COVERS
    return anchor.start <= (gone[0].start + gone[-1].end) / 2


def _placed(gone: list[Word], lo: float, hi: float) -> list[Word]:
    """``gone`` with its times kept in order within ``[lo, hi]``."""
    out: list[Word] = []
    for w in gone:
        start = min(max(w.start, lo), hi)
        end = min(max(w.end, start), hi)
        out.append(Word(w.text, start, end, w.probability))
        lo = end
    return out
