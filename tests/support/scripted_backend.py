"""A speech backend that knows the truth, for the streaming engine's invariant tests.

The audio carries its own position: sample ``k`` of a stream holds ``float(k)`` (:func:`ramp`).
A :class:`ScriptedBackend` answers each window from the :class:`Truth` words that window holds,
distorted as a :class:`PassStyle` says, in the ways real models distort them (seen with Whisper
base on tests/data): a guessed tail, a committed word heard differently, jittered times and
starts that swallow the silence before a word, words merged or split, a pass that stops early,
an empty pass, a pass that copies its prompt or writes ahead of its audio (both squeezed into
a few hundredths of a second, as Whisper does), a pass its prompt leads to write that prompt
again over what it heard, at plausible times, and words it is unsure of (a low probability on
the first words after a pause, as Whisper gives at a segment's onset, or random ones); by
default every word is sure (probability 1). :class:`TruthSpeech` is a speech gate that hears
speech where truth words are; :func:`audit` checks a transcript against the truth. A window
made of pieces of the stream (offline recognition drops long pauses) is heard as the pieces
place its words.

Word ``i`` is written ``" w{i}"`` (a heard variant ``" w{i}x{n}"``, split ``" w{i}s" " q{i}"``, a
hyphenated second piece ``"-p{i}"``), so every committed word says which truth word it stands for.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE, Word
from desktop_rt.engine.asr.backend import BackendTraits
from desktop_rt.engine.asr.spelling import normalize_word

__all__ = [
    "PassStyle",
    "ScriptedBackend",
    "Truth",
    "TruthSpeech",
    "TruthWord",
    "audit",
    "ramp",
    "word_ids",
]

HEARD_FRACTION = 0.6  # a word this much inside a window is heard; less, not at all
ONSET_PAUSE = 0.3  # a word this long after the one before it (or a window's first) is an onset


def ramp(first: int, count: int) -> np.ndarray:
    """``count`` samples of the stream from sample ``first`` on, each holding its own index."""
    return np.arange(first, first + count, dtype=np.float64).astype(np.float32)


@dataclass(frozen=True)
class TruthWord:
    """Word ``index`` of the stream, said from ``start`` to ``end`` (stream seconds)."""

    index: int
    start: float
    end: float
    sentence_end: bool = False
    hyphenated: bool = False  # written in two pieces, " w5" + "-p5" (as "ill" + "-disposed")

    def pieces(self) -> list[Word]:
        stop = "." if self.sentence_end else ""
        if not self.hyphenated:
            return [Word(f" w{self.index}{stop}", self.start, self.end)]
        mid = (self.start + self.end) / 2
        return [
            Word(f" w{self.index}", self.start, mid),
            Word(f"-p{self.index}{stop}", mid, self.end),
        ]

    def inside(self, start: float, end: float) -> float:
        """The fraction of this word's audio between ``start`` and ``end``."""
        overlap = min(end, self.end) - max(start, self.start)
        return max(0.0, overlap) / (self.end - self.start)


@dataclass(frozen=True)
class Truth:
    words: tuple[TruthWord, ...]

    def speech_at(self, start: float, end: float) -> bool:
        return any(w.start < end and start < w.end for w in self.words)

    def heard_in(self, start: float, end: float) -> list[TruthWord]:
        return [w for w in self.words if w.inside(start, end) >= HEARD_FRACTION]

    def after(self, end: float) -> list[TruthWord]:
        return [w for w in self.words if w.start >= end]


@dataclass(frozen=True)
class PassStyle:
    """How one pass distorts what its window holds (indices count the heard words)."""

    empty: bool = False  # hears nothing (a no-speech skip)
    prompt_only: int = 0  # writes only the last n words of its prompt, squeezed at the start
    prompt_copy: int = 0  # writes the last n prompt words, squeezed, before what it heard
    prompt_led: int = 0  # given a prompt of more words, writes its last n over what it heard,
    # at plausible times (Whisper led astray by the text before its window)
    write_ahead: int = 0  # continues with the next n words after its audio, squeezed at the end
    stop_early: int = 0  # leaves out its last n words (decoding ended early)
    skip_at: int | None = None  # leaves out ``skip`` words from this one, the next word
    skip: int = 0  # stretched back over them (a decoder jumping a stretch of speech)
    guessed_tail: int = 0  # its last n words come out as other words
    misheard: tuple[int, ...] = ()  # these words come out as other words
    merge_at: int | None = None  # this word and the next (said together) are written as one
    split_at: int | None = None  # this word is written as two
    variant: int = 1  # which other word a misheard one becomes
    shift: float = 0.0  # every time moves by this much
    jitter: float = 0.0  # every boundary moves by up to this much
    swallow: float = 0.0  # a word's start moves back by up to this much into the silence
    seed: int = 0
    unsure_onset: int = 0  # the first n words after each onset (ONSET_PAUSE) are unsure
    unsure: float = 0.3  # the probability an unsure word is given
    random_probability: bool = False  # every other word gets a probability drawn from [0, 1)


@dataclass
class _Out:
    word: Word
    ids: tuple[int, ...]  # the truth words it stands for (none: copied or written ahead)


@dataclass
class ScriptedBackend:
    """An ``AsrBackend`` whose every pass is the truth in its window, distorted by ``styles``
    (used in turn, the last one repeated). ``heard`` collects the truth words some pass gave."""

    truth: Truth
    styles: Sequence[PassStyle] = (PassStyle(),)
    traits: BackendTraits = BackendTraits()
    detected_language: tuple[str, float] | None = None
    name: str = "scripted"
    heard: set[int] = field(default_factory=set)
    calls: list[tuple[float, float, str | None]] = field(default_factory=list)
    written: dict[int, str] = field(default_factory=dict)  # the last pass's text per truth word

    def transcribe(
        self,
        audio: np.ndarray,
        *,
        prompt: str | None = None,
        language: str | None = None,
        prefix: str | None = None,
    ) -> list[Word]:
        first = int(audio[0])
        if int(audio[-1]) != first + len(audio) - 1:
            return self._pieced(audio, prompt=prompt, language=language, prefix=prefix)
        start, end = first / SAMPLE_RATE, (first + len(audio)) / SAMPLE_RATE
        style = self.styles[min(len(self.calls), len(self.styles) - 1)]
        self.calls.append((start, end, prompt))
        out = self._words(style, start, end, prompt)
        for o in out:
            self.heard.update(o.ids)
        self.written = {o.ids[0]: o.word.text for o in out if len(o.ids) == 1}
        words = _timed(style, out, start, end)
        return [w.shifted(-start) for w in words]

    def _pieced(self, audio: np.ndarray, **options: str | None) -> list[Word]:
        """A window of pieces of the stream (offline recognition drops long pauses): heard as
        one stretch of audio whose truth words are where the pieces put them."""
        cuts = [0, *(np.flatnonzero(np.diff(audio) != 1) + 1).tolist(), len(audio)]
        pieces = [  # (stream seconds, window seconds, seconds) of each run of samples in order
            (float(audio[a]) / SAMPLE_RATE, a / SAMPLE_RATE, (b - a) / SAMPLE_RATE)
            for a, b in zip(cuts, cuts[1:], strict=False)
        ]
        placed: list[TruthWord] = []
        for w in self.truth.words:
            for at, offset, seconds in pieces:
                if (
                    w.inside(at, at + seconds) >= HEARD_FRACTION
                    or w.start >= at + seconds
                    and ((at, offset, seconds) == pieces[-1])
                ):
                    shift = offset - at
                    placed.append(replace(w, start=w.start + shift, end=w.end + shift))
                    break
        style = self.styles[min(len(self.calls), len(self.styles) - 1)]
        inner = replace(self, truth=Truth(tuple(placed)), styles=(style,), calls=[], heard=set())
        words = inner.transcribe(ramp(0, len(audio)), **options)
        last = pieces[-1]
        self.calls.append((pieces[0][0], last[0] + last[2], options["prompt"]))
        self.heard |= inner.heard
        self.written = inner.written
        return words

    def _words(self, style: PassStyle, start: float, end: float, prompt: str | None) -> list[_Out]:
        if style.empty:
            return []
        heard = self.truth.heard_in(start, end)
        firsts = [w.start - start for w in heard[:1] if not style.prompt_only]
        room = max(0.0, min([0.14, end - start - 0.02, *firsts]))
        copied = _squeezed(
            _prompt_tail(prompt, style.prompt_only or style.prompt_copy), start, room
        )
        if style.prompt_only:
            return [_Out(w, ()) for w in copied]
        led = _prompt_tail(prompt, style.prompt_led)
        if heard and 0 < len(led) == style.prompt_led < len((prompt or "").split()):
            return [_Out(w, ()) for w in _spread(led, heard[0].start, heard[-1].end)]
        heard = heard[: max(0, len(heard) - style.stop_early)]
        out = [o for w in heard for o in _distorted(w, heard, style)]
        skipping, stretched = _skipped(heard, style)
        if stretched is not None:
            jumped = [o for w in skipping for o in _distorted(w, skipping, style)]
            # only a skip of words the pass before wrote, up to a word it wrote alike
            if self._wrote_before(out, jumped, stretched[0]):
                out = _stretched(jumped, stretched)
        out = _with_probabilities(style, heard, out)
        ahead = [p for w in self.truth.after(end)[: style.write_ahead] for p in w.pieces()]
        last = max((o.word.end for o in out), default=start)
        tail = _squeezed([w.text for w in ahead], min(max(end - 0.06, last), end - 0.03))
        return [_Out(w, ()) for w in copied] + out + [_Out(w, ()) for w in tail]

    def _wrote_before(self, whole: list[_Out], out: list[_Out], anchor: int) -> bool:
        """Whether the pass before wrote every word this one skips, and the word after them
        as this one writes it (the skip that :mod:`.skipped` puts back)."""
        kept = {i for o in out for i in o.ids}
        skipped = {i for o in whole for i in o.ids} - kept
        same = [o.word.text for o in out if o.ids == (anchor,)][:1] == [self.written.get(anchor)]
        return same and skipped <= set(self.written)

    def close(self) -> None:
        pass


def _skipped(
    heard: list[TruthWord], style: PassStyle
) -> tuple[list[TruthWord], tuple[int, float] | None]:
    """``heard`` less the words the pass skips, and (index, start) of the word after them,
    which the pass starts where the first skipped word did; only a skip with a word after it."""
    at = style.skip_at
    if at is None or not style.skip or at + style.skip >= len(heard):
        return heard, None
    nxt = heard[at + style.skip]
    return heard[:at] + heard[at + style.skip :], (nxt.index, heard[at].start)


def _stretched(out: list[_Out], stretched: tuple[int, float]) -> list[_Out]:
    """``out`` with the first word written for truth word ``stretched[0]`` starting at
    ``stretched[1]``."""
    index, start = stretched
    for k, o in enumerate(out):
        if o.ids[:1] == (index,):
            w = o.word
            out = list(out)
            out[k] = _Out(Word(w.text, min(start, w.start), w.end, w.probability), o.ids)
            break
    return out


def _distorted(w: TruthWord, heard: list[TruthWord], style: PassStyle) -> list[_Out]:
    """Truth word ``w`` as this pass writes it."""
    i = heard.index(w)
    merge = style.merge_at if style.merge_at is not None else -2
    if not 0 <= merge < len(heard) - 1 or heard[merge + 1].start - heard[merge].end > 0.1:
        merge = -2  # only words said together are written as one
    if i == merge + 1:
        return []  # written with the word before
    pieces, ids = w.pieces(), (w.index,)
    if i == merge:
        nxt = heard[i + 1].pieces()
        text = "".join(p.text.strip() for p in pieces + nxt)
        pieces, ids = (
            [Word(" " + text, pieces[0].start, nxt[-1].end)],
            (w.index, heard[i + 1].index),
        )
    if style.split_at == i and not w.hyphenated and i != merge:
        mid = (w.start + w.end) / 2
        pieces = [Word(f" w{w.index}s", w.start, mid), Word(f" q{w.index}", mid, w.end)]
    if i in style.misheard or i >= len(heard) - style.guessed_tail:
        pieces = [Word(f"{p.text.rstrip('.')}x{style.variant}", p.start, p.end) for p in pieces]
    return [_Out(p, ids) for p in pieces]


def _with_probabilities(style: PassStyle, heard: list[TruthWord], words: list[_Out]) -> list[_Out]:
    """``words`` with the probabilities this pass gives them: ``style.unsure`` for the first
    ``style.unsure_onset`` ``heard`` words after each onset (the window's first word, and any
    after a pause), a random one or 1 for the others."""
    if not (style.unsure_onset or style.random_probability):
        return words
    unsure: set[int] = set()
    rank = 0
    for before, w in zip([None, *heard], heard, strict=False):
        rank = 0 if before is None or w.start - before.end >= ONSET_PAUSE else rank + 1
        if rank < style.unsure_onset:
            unsure.add(w.index)
    rng = random.Random(style.seed)
    out = []
    for o in words:
        p = rng.random() if style.random_probability else 1.0
        p = style.unsure if unsure & set(o.ids) else p
        out.append(_Out(Word(o.word.text, o.word.start, o.word.end, p), o.ids))
    return out


def _prompt_tail(prompt: str | None, n: int) -> list[str]:
    """The last ``n`` words of the prompt, as a copy of it writes them; none from a prompt of
    one word, whose copy no engine could tell from speech by its times."""
    words = (prompt or "").split()
    return [" " + t for t in words[-n:]] if n and len(words) > 1 else []


def _spread(texts: Sequence[str], start: float, end: float) -> list[Word]:
    """Text over ``[start, end]`` in equal parts, as a decoder aligns words it wrote there."""
    step = (end - start) / len(texts)
    return [Word(t, start + i * step, start + (i + 1) * step) for i, t in enumerate(texts)]


def _squeezed(texts: Sequence[str], at: float, lead: float = 0.0) -> list[Word]:
    """Text with no audio under it, as Whisper aligns it: the first word may take ``lead``
    seconds (the silence it starts in), the others none."""
    return [Word(t, at + (lead if i else 0.0), at + lead) for i, t in enumerate(texts)]


def _timed(style: PassStyle, words: list[_Out], start: float, end: float) -> list[Word]:
    """Move the words' times as a decoder's alignment does; keep them in order, in the window.
    Text with no audio under it (``ids`` empty) keeps its squeezed times."""
    rng = random.Random(style.seed)
    out: list[Word] = []
    last = start
    for o in words:
        w = o.word
        if not o.ids:
            out.append(w)
            last = max(last, w.end)
            continue
        s = w.start + style.shift + rng.uniform(-style.jitter, style.jitter)
        e = w.end + style.shift + rng.uniform(-style.jitter, style.jitter)
        s -= rng.uniform(0.0, style.swallow)
        s = min(max(s, last, start), end)
        e = min(max(e, s), end)
        out.append(Word(w.text, s, e, w.probability))
        last = e
    return out


_ID = re.compile(r"([wpq])(\d+)")


def word_ids(text: str) -> list[tuple[str, int]]:
    """The truth words a written word stands for: ``(piece, index)`` pairs."""
    return [(kind, int(i)) for kind, i in _ID.findall(normalize_word(text))]


def audit(
    emitted: Sequence[tuple[Word, float]], truth: Truth, heard: set[int], excused: set[int]
) -> list[str]:
    """What is wrong with a transcript: each committed word with the stream time it came at.

    Wrong: a truth word (piece) written twice, out of order, before its audio began, or a word
    some pass heard that is not in the transcript (``excused``: cleared before it was committed).
    """
    problems: list[str] = []
    seen: set[tuple[str, int]] = set()
    last = -1
    starts = {w.index: w.start for w in truth.words}
    for word, at in emitted:
        for kind, i in word_ids(word.text):
            if (kind, i) in seen:
                problems.append(f"repeated {kind}{i} ({word.text!r} at {at:.2f} s)")
            if i < last:
                problems.append(f"out of order {kind}{i} after w{last}")
            if starts.get(i, 0.0) >= at:
                problems.append(f"written ahead: {kind}{i} at {at:.2f} s")
            seen.add((kind, i))
            last = max(last, i)
    written = {i for _, i in seen}
    lost = sorted(heard - written - excused)
    if lost:
        problems.append(f"dropped {lost}")
    return problems


class TruthSpeech:
    """A speech gate for ramp audio: a frame is speech where a truth word is said."""

    def __init__(self, truth: Truth):
        self._truth = truth

    def __call__(self, frame: np.ndarray) -> float:
        start = int(frame[0]) / SAMPLE_RATE
        return 1.0 if self._truth.speech_at(start, start + len(frame) / SAMPLE_RATE) else 0.0

    def reset(self) -> None:
        pass
