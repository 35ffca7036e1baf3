"""Speech a segment's last pass skipped and an earlier pass heard: :func:`restore_skipped`.

A decoder sometimes jumps a stretch of speech and starts the next word where the stretch began
(the 10 dB stream: "when a conference administrators can join", "administrators" over 1.86 s,
where an earlier pass heard "is locked only conference administrators"). A segment's last pass
is committed without agreement, so such a stretch was lost at the endpoint. Here each earlier
hypothesis is aligned with the last one by word; a stretch only the earlier one has (after the
words both wrote, alike or not), followed by a word both have that the last pass stretched over
the stretch, is put back before it.
A stretch the last pass wrote as other words, or whose time the last pass leaves to the words
before it, is not a skip: the last pass, which heard the whole window, stands. Nor is a lone
word, unless the word stretched over it starts inside committed speech: replayed over the
clean and 10 dB streams, the only lone ones were older passes' insertions ("that do your",
"call Please").
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.spelling import normalize_word

__all__ = ["restore_skipped"]

_LEAST_WORDS = 2  # a lone word only one pass has is as often that pass's insertion


def restore_skipped(
    words: Sequence[Word], earlier: Sequence[Sequence[Word]], committed_end: float = 0.0
) -> list[Word]:
    """``words`` (a last pass, after the commit point ``committed_end``) with what each of the
    ``earlier`` hypotheses (newest first, after the same point) heard in a stretch it skipped."""
    out = list(words)
    for hypothesis in earlier:
        out = _restored(out, list(hypothesis), committed_end)
    return out


def _restored(last: list[Word], earlier: list[Word], committed_end: float) -> list[Word]:
    a = [normalize_word(w.text) for w in earlier]
    b = [normalize_word(w.text) for w in last]
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    before: dict[int, list[Word]] = {}  # index in ``last`` -> the stretch put back before it
    for (tag, i1, i2, j1, j2), after in zip(ops, ops[1:], strict=False):
        if tag not in ("delete", "replace") or after[0] != "equal":
            continue
        # Words only the earlier pass has end the block (the last pass's words in it stand for
        # its first ones: "w0x1 w1 w2" against "w0"); the same alignment with the stretch moved
        # right while the word after it repeats its first ("conference | is locked only
        # conference administrators") puts it right before the word the last pass stretched.
        first, shift = i1 + (j2 - j1), 0
        if first >= i2:
            continue
        while i2 + shift < after[2] - 1 and a[first + shift] == a[i2 + shift]:
            shift += 1
        gone = earlier[first + shift : i2 + shift]
        if _skipped_over(gone, last[j2 + shift], committed_end):
            before[j2 + shift] = gone
    if not before:
        return last
    out: list[Word] = []
    for i, w in enumerate(last):
        if i in before:
            placed = _placed(before[i], out[-1].end if out else before[i][0].start, w.end)
            out += placed
            w = Word(w.text, max(w.start, placed[-1].end), w.end, w.probability)
        out.append(w)
    return out


def _skipped_over(gone: list[Word], anchor: Word, committed_end: float) -> bool:
    """Whether a pass that wrote ``anchor`` right after where ``gone`` was skipped ``gone``:
    whole written words that the anchor spans (it starts before the first of them ends and ends
    after the last: stretched back over them; an anchor that starts later gave their time to
    the words before it). Two words at least, or one that an anchor starting inside committed
    speech spans (stretched over that too)."""
    if len(gone) < _LEAST_WORDS and anchor.start >= committed_end:
        return False
    if not gone[0].text[:1].isspace() or not anchor.text[:1].isspace():
        return False
    return anchor.start < gone[0].end and anchor.end >= gone[-1].end


def _placed(gone: list[Word], lo: float, hi: float) -> list[Word]:
    """``gone`` with its times kept in order within ``[lo, hi]``."""
    out: list[Word] = []
    for w in gone:
        start = min(max(w.start, lo), hi)
        end = min(max(w.end, start), hi)
        out.append(Word(w.text, start, end, w.probability))
        lo = end
    return out
