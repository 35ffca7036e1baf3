"""Cleaning one pass's words of what a decoder writes without audio: :func:`drop_runaway`.

Pure function over window-relative words; the streaming engine applies it to every pass. What
it drops was never heard: words past the window's end, text squeezed into no time (a copied
prompt, a phrase written ahead), a decoder loop, words past a rate no speaker reaches. A
written word ("ill" + "-disposed") is kept or dropped whole.
"""

from __future__ import annotations

from collections.abc import Sequence

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.spelling import normalize_word

__all__ = ["MAX_WORDS_PER_SECOND", "drop_after", "drop_echoed_endings", "drop_runaway"]

MAX_WORDS_PER_SECOND = 7.0
"""Fast speech is 4-5 words a second; more is a decoder loop."""

_LOOP_WORDS = 16  # the longest phrase a loop is looked for in
_PAST_END = 0.02  # a word starting this close to the window's end lies after it
_AFTER_SPEECH = 0.1  # a word with its middle this long after the speech ended is not in it
_UNHEARD = 0.03  # a word shorter than this has no audio under it (one 20 ms step, or none)
_AT_END = 0.05  # a word ending this close to the window's end ran out of audio there
_ECHO_GAP = 0.1  # a word's ending written again starts this close after the word


def _repeat_limit(n: int) -> int:
    """How many times in a row a phrase of ``n`` words is kept before a repeat is a loop."""
    return 4 if n == 1 else 2 if n <= 6 else 1


def _loop_length(norm: list[str], i: int, out_norm: list[str]) -> int:
    """The length of the phrase starting at ``norm[i]`` that loops over ``out_norm``'s tail, or 0."""
    word, have = norm[i], len(out_norm)
    for n in range(min(_LOOP_WORDS, len(norm) - i), 0, -1):
        limit = _repeat_limit(n)
        if have < n * limit or out_norm[have - n] != word:  # cheap tests first
            continue
        if norm[i : i + n] == out_norm[-n:] and all(
            out_norm[have - n * (k + 1) : have - n * k] == out_norm[-n:] for k in range(limit)
        ):
            return n
    return 0


def _unheard(words: Sequence[Word], prompt: str | None, duration: float) -> set[int]:
    """Indices of text a decoder wrote with no audio under it.

    Whisper given a prompt can copy it at the window's start or continue a phrase it repeats
    past the audio; its alignment squeezes such text into no time ("He@2.60-2.74 was@2.74-2.74
    not@2.74-2.74 ..."). Unheard: two or more words in a row each shorter than ``_UNHEARD``,
    or any such words ending the hypothesis (a word cut by the window's end), and then the
    word before them too if it ends at the window's end and they repeat earlier text
    (:func:`_stretched_into`): the decoder stretched the first word of a copy over the last of
    the audio. Squeezed words right
    after the hypothesis's first word take it with them when together they are the end of
    the ``prompt``: a copy whose first word's start took in the silence before it.
    """
    short = [_short(w) for w in words]
    run = 1
    while run < len(words) and short[run]:
        run += 1
    copy = next((k for k in range(run, 1, -1) if _copied(words[:k], prompt)), 0)
    out = set(range(copy))
    i = copy
    while i < len(words):
        j = i
        while j < len(words) and short[j]:
            j += 1
        if j - i >= 2 or (j > i and j == len(words)):
            out.update(range(i, j))
            if j == len(words) and i > copy and _stretched_into(words, i, prompt, duration):
                out.add(i - 1)
        i = max(j, i + 1)
    return out


def _stretched_into(words: Sequence[Word], tail: int, prompt: str | None, duration: float) -> bool:
    """Whether the word before the squeezed ``words[tail:]`` ends at the window's end and the
    squeezed words repeat what came before (the prompt, or this hypothesis): a decoder that
    went on writing text it had written. A squeezed tail of new words is a phrase written
    ahead, and the word before it is speech cut by the window's end: it stays."""
    if words[tail - 1].end < duration - _AT_END:
        return False
    before = {normalize_word(t) for t in (prompt or "").split()}
    before |= {normalize_word(w.text) for w in words[:tail]}
    return all(normalize_word(w.text) in before for w in words[tail:])


def _copied(words: Sequence[Word], prompt: str | None) -> bool:
    """Whether ``words`` write the last words of ``prompt``, as agreement compares words."""
    written = "".join(w.text for w in words).split()
    tail = (prompt or "").split()[-len(written) :]
    return bool(written) and [normalize_word(t) for t in tail] == [
        normalize_word(t) for t in written
    ]


def _squeezed_sayings(words: Sequence[Word]) -> set[int]:
    """Indices of a phrase's squeezed saying where a decoder wrote it twice in a row.

    Whisper past a sentence's end can write its next phrase twice and align both over the
    one saying it heard, one of them with a word in no time ("try again. Fail@5.34-5.54
    again.@5.54-5.54 Fail@5.96-6.84 again.@6.84-7.12"; "Fail@7.64-8.22 better.@8.22-8.22
    Fail@8.22-8.32 better.@8.32-8.60"), and a segment's end then committed the phrase twice.
    A phrase of 2-16 words said twice in a row where exactly one saying holds a word shorter
    than ``_UNHEARD``: that saying was not spoken. A speaker repeating a phrase is heard
    each time (one word said twice, a stutter, is left alone).
    """
    norm = [normalize_word(w.text) for w in words]
    out: set[int] = set()
    i = 0
    while i < len(words):
        for n in range(min(_LOOP_WORDS, (len(words) - i) // 2), 1, -1):
            first, second = range(i, i + n), range(i + n, i + 2 * n)
            if not norm[i] or norm[i : i + n] != norm[i + n : i + 2 * n]:
                continue
            short = [any(_short(words[k]) for k in said) for said in (first, second)]
            if short[0] != short[1]:
                out.update(first if short[0] else second)
                i += 2 * n - 1
                break
        i += 1
    return out


def _echoed_endings(words: Sequence[Word]) -> set[int]:
    """Indices of a word's ending written again as a sentence of its own.

    Whisper at the end of a turn can write a word's last syllables once more after it, as if a
    new sentence began ("a mailbox.@4.15-4.47 Box.@4.47-4.71": "box" said once). Dropped: a
    word that is the end (three letters or more, not all) of the word just before it, when that
    word ends a sentence and this one starts within ``_ECHO_GAP`` of it. A speaker who says a
    word's ending again ("a mailbox, box") does not end the sentence between them.
    """
    out: set[int] = set()
    for i in range(1, len(words)):
        before, word = words[i - 1], words[i]
        head, key = normalize_word(before.text), normalize_word(word.text)
        if (
            len(key) >= 3
            and len(head) > len(key)
            and head.endswith(key)
            and before.text.rstrip()[-1:] in ".?!"
            and word.start - before.end <= _ECHO_GAP
        ):
            out.add(i)
    return out


def drop_echoed_endings(words: Sequence[Word]) -> list[Word]:
    """``words`` less each word's ending written again as a sentence (:func:`_echoed_endings`):
    for words decoded in pieces, as a file's window and the rest of it heard again are."""
    return _whole_words(words, _echoed_endings(words))


def _short(word: Word) -> bool:
    return word.end - word.start < _UNHEARD


def _whole_words(words: Sequence[Word], dropped: set[int]) -> list[Word]:
    """``words`` less ``dropped``, and less every other piece of a written word dropped."""
    drop = [i in dropped for i in range(len(words))]
    for i in range(len(words) - 1, 0, -1):  # a piece continuing a dropped one goes with it
        if drop[i - 1] and not words[i].text[:1].isspace():
            drop[i] = True
    for i in range(len(words) - 1, 0, -1):  # and so does the start of a dropped piece's word
        if drop[i] and not words[i].text[:1].isspace():
            drop[i - 1] = True
    return [w for w, gone in zip(words, drop, strict=True) if not gone]


def _within_rate(words: list[Word], duration: float) -> list[Word]:
    """The words up to the most written words a speaker says in ``duration``."""
    written = 0
    for i, w in enumerate(words):
        written += w.text[:1].isspace() or i == 0
        if written > int(MAX_WORDS_PER_SECOND * duration) + 4:
            return words[:i]
    return words


def drop_runaway(words: Sequence[Word], duration: float, prompt: str | None = None) -> list[Word]:
    """Remove what a decoder writes without hearing it, keeping real speech.

    Whisper on a short or noisy window can repeat a phrase until its token limit ("Fail better.
    Fail better. ..."), or place words after the audio ends. Dropped: words starting past the
    end of the window; text squeezed into no time, or copied from ``prompt`` (the text before
    the window) and squeezed (:func:`_unheard`); the squeezed one of a phrase written twice
    in a row (:func:`_squeezed_sayings`); a word's ending written again as a sentence
    (:func:`_echoed_endings`); one word more than four times in a row (kept
    four times); a phrase of 2-6 words more than twice, or of 7-16 words more than once, when
    the repeat is said in under half the time the phrase took before (speech that repeats
    a sentence takes as long each time: "He was not an ill-disposed young man. He was not an
    ill-disposed young man."); anything past a rate no speaker reaches.
    """
    kept = _whole_words(words, _unheard(words, prompt, duration))
    kept = _whole_words(kept, _squeezed_sayings(kept))
    kept = drop_echoed_endings(kept)
    kept = [w for w in kept if w.start < duration - _PAST_END]
    norm = [normalize_word(w.text) for w in kept]
    out: list[Word] = []
    out_norm: list[str] = []
    i = 0
    while i < len(kept):
        loop = _loop_length(norm, i, out_norm)
        if loop and len(set(norm[i : i + loop])) == 1:
            loop = 1  # one word said over and over
        if loop and (loop == 1 or _span(kept[i : i + loop]) < _said_in(out, loop) / 2):
            i += loop
            continue
        out.append(kept[i])
        out_norm.append(norm[i])
        i += 1
    return _within_rate(out, duration)


def drop_after(words: Sequence[Word], t: float) -> list[Word]:
    """``words`` less those in the silence after ``t`` (where the speech so far ended), whole
    written words: starting after it, or with their middle ``_AFTER_SPEECH`` after it.

    A decoder whose prompt repeats what it hears can go on writing the phrase into the pause
    after the speech ("He was not an | ill-disposed", with only "an" said yet).
    """
    late = {
        i for i, w in enumerate(words) if w.start >= t or (w.start + w.end) / 2 > t + _AFTER_SPEECH
    }
    return _whole_words(words, late)


def _span(words: Sequence[Word]) -> float:
    return words[-1].end - words[0].start


def _said_in(out: Sequence[Word], n: int) -> float:
    """The longest time the last ``_repeat_limit(n)`` repeats of ``out``'s last phrase took."""
    limit = _repeat_limit(n)
    return max(_span(out[len(out) - n * (k + 1) : len(out) - n * k]) for k in range(limit))
