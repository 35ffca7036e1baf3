"""Whether a pass's committed-text prompt led the decoder astray: :func:`prompt_misled`.

Pure functions over one pass's words. Whisper given the text before its window can write that
text again over new speech (10 dB stream: "the conference will begin when the" over "I am
sorry, there is no call parked", word times plausible, so :mod:`.runaway` keeps it) or write
nothing over seconds of speech it hears whole without the prompt. The streaming engine hears
such a window again without the committed text (docs/design/streaming.md, *A pass its prompt
leads astray is heard without it*); :func:`says_again` tells when that pass confirms the copy.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.spelling import normalize_word

__all__ = [
    "COPY_WORDS",
    "EMPTY_SPEECH_SECONDS",
    "Phrase",
    "copied_phrases",
    "prompt_copy",
    "prompt_misled",
    "says_again",
]

COPY_WORDS = 4
"""Written words in a row the prompt has in a row that make a copy (a whole hypothesis: 3)."""
EMPTY_SPEECH_SECONDS = 1.5
"""Speech a pass heard, at least, for an empty hypothesis to be the prompt's doing."""


def _written(words: Sequence[Word]) -> list[tuple[str, list[int]]]:
    """Each written word ("ill" + "-disposed" is one), normalized, with its pieces' indices."""
    out: list[tuple[str, list[int]]] = []
    for i, w in enumerate(words):
        if out and not w.text[:1].isspace():
            text, pieces = out[-1]
            out[-1] = (text + w.text, [*pieces, i])
        else:
            out.append((w.text, [i]))
    return [(normalize_word(t), p) for t, p in out if normalize_word(t)]


Phrase = tuple[str, ...]
"""Words in a row, normalized: a run a hypothesis and the prompt both have."""


def _copies(words: Sequence[Word], prompt: str) -> list[tuple[Phrase, list[int]]]:
    """Each run of ``COPY_WORDS`` written words (all of them, when they are 3 or more) that
    ``prompt`` has in a row, with the indices of ``words`` that write it."""
    written = _written(words)
    before = [n for n in (normalize_word(t) for t in prompt.split()) if n]
    need = min(COPY_WORDS, len(written))
    if need < 3:
        return []
    grams = {tuple(before[i : i + need]) for i in range(len(before) - need + 1)}
    out = []
    for i in range(len(written) - need + 1):
        gram = tuple(t for t, _ in written[i : i + need])
        if gram in grams:
            out.append((gram, [k for _, pieces in written[i : i + need] for k in pieces]))
    return out


def prompt_copy(words: Sequence[Word], prompt: str, said: Collection[Phrase] = ()) -> set[int]:
    """Indices of ``words`` that write ``COPY_WORDS`` or more words in a row that ``prompt``
    has in a row (all of them, when they are 3 or more), compared as agreement compares words;
    a run sharing three words in a row with one in ``said`` (the speech was heard to say it
    again, maybe on a shorter window) is no copy."""
    heard = {p[i : i + 3] for p in said for i in range(len(p) - 2)}
    return {
        k
        for gram, pieces in _copies(words, prompt)
        if not any(gram[i : i + 3] in heard for i in range(len(gram) - 2))
        for k in pieces
    }


def copied_phrases(words: Sequence[Word], prompt: str) -> set[Phrase]:
    """The runs :func:`prompt_copy` finds in ``words``."""
    return {gram for gram, _ in _copies(words, prompt)}


def says_again(words: Sequence[Word], phrases: Collection[Phrase]) -> bool:
    """Whether ``words`` (a pass without the prompt) write one of the copied ``phrases`` too,
    one word of four or more aside (a word spelled otherwise without the prompt's context)."""
    written = [t for t, _ in _written(words)]
    for phrase in phrases:
        n, slack = len(phrase), 1 if len(phrase) >= COPY_WORDS else 0
        for i in range(len(written) - n + 1):
            if sum(a != b for a, b in zip(phrase, written[i : i + n], strict=True)) <= slack:
                return True
    return False


def prompt_misled(
    kept: Sequence[Word], prompt: str | None, speech_seconds: float, said: Collection[Phrase] = ()
) -> bool:
    """Whether a pass given the committed text ``prompt`` went astray: what was ``kept`` of its
    words (:func:`~.runaway.drop_runaway`, which drops a copy squeezed into no time) copies
    the prompt (``said``: as in :func:`prompt_copy`), or is nothing over ``speech_seconds`` of
    speech, ``EMPTY_SPEECH_SECONDS`` or more."""
    if not prompt:
        return False
    if not kept:
        return speech_seconds >= EMPTY_SPEECH_SECONDS
    return bool(prompt_copy(kept, prompt, said))
