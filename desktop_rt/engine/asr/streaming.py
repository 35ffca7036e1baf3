"""Streaming transcription over a whole-window backend: LocalAgreement-2 with a speech gate.

The verbs follow whisper_streaming: :meth:`StreamingTranscriber.insert_audio`,
:meth:`~StreamingTranscriber.process`, :meth:`~StreamingTranscriber.finish`.

How it works
------------
Audio accumulates in a window that starts at ``buffer_start`` (stream seconds). Each
:meth:`process` call that has at least ``min_chunk_seconds`` of new audio re-transcribes the
window. Words are *committed* once two consecutive hypotheses agree on them (the longest common
prefix, compared case- and punctuation-insensitively); the rest of the newest hypothesis is the
*tentative* tail that captions show dimmed. Committed words are final: they are never emitted
again nor changed.

The onset of a segment is where latency is won or lost, and where the model is least sure: on
its first second of speech it guesses ("How do you marry" for "Had he married"), and two
quick guesses can agree on wrong words. So while a segment's window is shorter than
``min_agree_seconds`` the engine updates more often (every ``onset_chunk_seconds``, starting
once the window holds ``min_window_seconds``: shorter windows give only noise and flicker),
and any window that short (also one a trim left short) needs more evidence: the
``onset_agreement`` (2) latest hypotheses must agree, each giving every word at least
``onset_min_probability`` (0.5) and the newest, which heard the most audio, at least
``onset_latest_probability`` (0.6). The probabilities are the backend's; Whisper's count every
spelling agreement treats as the same word (engine/backends/spelling.py: Whisper base splits a
sentence-initial "And" between " And" and " and"). Measured by bench/bench_onset.py (six
shuffled streams of the eval clips, 36 segment onsets): the first word of a segment is committed
0.8 s of audio after it ends and WER is 4.0%; with no onset rule it was 2.4 s and 4.6%. Tried
there and rejected: both floors 0.5 (WER 4.2%); three hypotheses with floor 0.4 on folded
probabilities (4.8%); on faster-whisper's word-alignment probabilities, which do not fold
spellings, three hypotheses with 0.4 (4.0%, onset 1.2 s; it left a quiet opening "And" waiting
for 2 s windows), two anchored on a later word the model is 0.93 sure of (6.4%: it committed
"How do you" for "Had he").

The window is trimmed at the end of a committed sentence once it grows past ``trim_seconds``
(or at the last committed word past ``max_window_seconds``), and committed text that has left
the window becomes the prompt for the next pass, so context survives the trim. Words of a new
hypothesis that start before the last committed word ended, or that repeat the committed tail
(up to five words), are dropped: that is what keeps a trim or a commit from re-emitting a word.

Until a trim, a window still holds the audio of the words it committed, and each pass hears
them again. When a pass hears them as other words (compared as agreement compares words), its
decoder has gone astray on audio that is already settled, and it tends to repeat the error:
Whisper base re-heard a committed "ill-disposed" as "ild-sposed" (probability 0.2) and then
wrote "ild-sposed." for the same word at the sentence's end, sure of it (0.9); two such passes
agreed, and the wrong word was committed (1 run in 9 at real time, 4 in 6 at 2x pace, WER 5.6%
instead of 2.8%). Such a pass is thrown away and run again on the window cut where the
committed words end, with them as its prompt (``rehearings`` counts these): the model then
copies the committed spelling instead.

A backend that encodes audio in blocks and keeps them (the GGUF one: ``update_grid_seconds``)
is heard on its block grid: a pass each time the window crosses a block boundary, hearing whole
blocks, and trims cut on the grid. A backend that can force text (``accepts_prefix``) is given
the committed words still in the window as a prefix and returns only the words after them, so
the commit point does not rest on its word times (the GGUF backend can only estimate them).

A voice-activity gate (Silero) keeps silence and noise away from the model, which otherwise
invents text on them. Audio before speech is dropped (keeping ``speech_pad_seconds``); when
speech has been followed by ``endpoint_silence_seconds`` of silence, the segment is committed
whole, so a sentence does not wait for the next one to settle. Its last pass runs as soon as
``speech_pad_seconds`` of silence follow the speech (not at the next ``min_chunk_seconds``),
and once ``pause_hint_seconds`` of silence follow speech, a regular pass waits for that closing
one (it would hear the same words a few tenths of a second earlier). The endpoint, or
:meth:`StreamingTranscriber.finish`, commits that hypothesis without another pass when nothing
but silence came after it: the words that end a sentence no longer
wait for a pass after the endpoint (and commit earlier when the closing pass agrees with the
one before).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE, Word
from desktop_rt.engine.asr.backend import AsrBackend
from desktop_rt.engine.asr.spelling import normalize_word
from desktop_rt.engine.audio.vad import FRAME_SECONDS, FrameVad, SpeechProbability

__all__ = [
    "StreamingConfig",
    "StreamUpdate",
    "StreamingTranscriber",
    "normalize_word",
    "drop_runaway",
]

_SENTENCE_END = (".", "?", "!", "…")


_REPEAT_WORDS = 16  # how far back a hypothesis may repeat the committed words
MAX_WORDS_PER_SECOND = 7.0  # fast speech is 4-5; more is a decoder loop
_EDGE = 0.02  # a word ending this close after the window start lies before it (the start is rounded to a sample)
_COMMIT_SLACK = (
    0.1  # a word starting this close before the last committed end is a committed word heard again
)
_PREFIX_MARGIN = 1.0  # committed words ending this close before the window start are forced too (see _window_prefix)
_LANGUAGE_SURE = (
    0.6  # a detected language this probable is kept for the stream (see _language_for_pass)
)


def drop_runaway(words: Sequence[Word], duration: float) -> list[Word]:
    """Remove what a decoder invents when it loops, keeping real speech.

    Whisper on a short or noisy window can repeat a phrase until its token limit ("Fail better.
    Fail better. ..."), or place words after the audio ends. Dropped: words starting past the
    end of the window; a phrase of 7-16 words said twice in a row (a loop over the whole
    sentence: "He might even have been made amiable himself. He might even ..."), of 2-6 words
    more than twice, or one word more than four times in a row (kept once, twice, resp. four
    times); anything past a rate no speaker reaches.
    """
    kept = [w for w in words if w.start < duration - 0.02]
    norm = [normalize_word(w.text) for w in kept]
    out: list[Word] = []
    out_norm: list[str] = []
    i = 0
    while i < len(kept):
        skipped = False
        for n in range(_REPEAT_WORDS, 0, -1):
            limit = 4 if n == 1 else 2 if n <= 6 else 1
            if (
                len(out_norm) >= n * limit
                and norm[i : i + n] == out_norm[-n:]
                and all(
                    out_norm[-n * (k + 1) : len(out_norm) - n * k] == out_norm[-n:]
                    for k in range(limit)
                )
            ):
                i += n
                skipped = True
                break
        if not skipped:
            out.append(kept[i])
            out_norm.append(norm[i])
            i += 1
    return out[: int(MAX_WORDS_PER_SECOND * duration) + 4]


def _whole_words(words: Sequence[Word], n: int) -> int:
    """The longest prefix of ``words[:n]`` that ends at a written word's end.

    Whisper splits "ill-disposed" into "ill" + "-disposed"; two hypotheses agreeing on "ild" (of
    "ild-sposed") must not commit it while its other half is still unsettled.
    """
    while 0 < n < len(words) and not words[n].text[:1].isspace():
        n -= 1
    return n


@dataclass(frozen=True)
class StreamingConfig:
    language: str | None = None
    prompt: str | None = None
    min_chunk_seconds: float = 0.6
    # 12, not less: after a trim at 8 s Whisper base sometimes copied the prompt (the sentence
    # before) into the short new window ("... ill-disposed. then he was not an ill-disposed")
    trim_seconds: float = 12.0
    max_window_seconds: float = 24.0
    prompt_chars: int = 200
    vad: bool = True
    vad_threshold: float = 0.5
    speech_pad_seconds: float = 0.4
    endpoint_silence_seconds: float = 0.8
    min_agree_seconds: float = 2.0  # windows shorter than this are a segment's onset
    onset_chunk_seconds: float = 0.3
    min_window_seconds: float = 0.9  # the speech pad included: 0.5 s of speech
    onset_agreement: int = 2
    onset_min_probability: float = 0.5
    onset_latest_probability: float | None = 0.6  # floor for the newest hypothesis (None: the same)
    # Silence after which a regular pass waits for the closing pass instead (None: never). 0.25:
    # LibriVox 6% less CPU side by side, bench_onset unchanged (WER 4.02%, onset 0.83 s); 0.15
    # cost onsets 0.3 s (bench/results/onset-2026-11-30.jsonl).
    pause_hint_seconds: float | None = 0.25


@dataclass(frozen=True)
class StreamUpdate:
    """What one call produced: words committed by it, and the whole current tentative tail."""

    committed: tuple[Word, ...] = ()
    tentative: tuple[Word, ...] = ()

    @property
    def committed_text(self) -> str:
        return "".join(w.text for w in self.committed)

    @property
    def tentative_text(self) -> str:
        return "".join(w.text for w in self.tentative)


class StreamingTranscriber:
    """Turns a chunked audio stream into committed and tentative words.

    Call order: any number of ``insert_audio`` / ``process`` pairs, then ``finish`` to commit
    what is held back. After ``finish`` (or ``clear``) the transcriber takes new audio again;
    the stream clock keeps running, so word times stay in stream seconds.
    """

    def __init__(
        self,
        backend: AsrBackend,
        config: StreamingConfig = StreamingConfig(),
        speech_probability: SpeechProbability | None = None,
    ):
        self.backend = backend
        self.config = config
        traits = backend.traits
        self._backend_chunk = traits.min_update_seconds  # least new audio an update is worth
        self._grid = traits.update_grid_seconds or None  # whole blocks: see _grid_pass_due
        self._grid_step = (
            self._grid * max(1, round(self._backend_chunk / self._grid)) if self._grid else None
        )
        self._forces_prefix = traits.forces_prefix  # committed words are forced: _window_prefix
        self._segment_begin = 0.0  # stream time the current segment's window began
        self._language = config.language
        # With no language set: the one the backend detected on this stream, and whether this
        # segment has confirmed it (see _language_for_pass).
        self._detected: str | None = None
        self._segment_language_checked = False
        self._user_prompt = config.prompt
        self._vad = FrameVad(speech_probability) if config.vad else None
        self._buffer = np.zeros(0, dtype=np.float32)
        self._buffer_start = 0.0
        self._total = 0
        self._new_samples = 0
        self._context: list[Word] = []  # committed words, newest last (bounded)
        self._last_committed_end = 0.0
        # Recent hypotheses beyond the committed prefix, newest last, and whether each came
        # from an onset window.
        self._history: list[tuple[list[Word], bool]] = []
        self._trimmed = False  # the window has been trimmed since the segment began
        self._tentative: tuple[Word, ...] = ()
        self._hypothesis_end: float | None = (
            None  # stream time the latest hypothesis's window ended
        )
        self._speech_start: float | None = None  # first speech frame since the gate last closed
        self._last_speech_end = 0.0
        self.inferences = 0
        self.rehearings = (
            0  # passes run again on a window cut where committed words end (see _transcribe)
        )

    # -- settings -------------------------------------------------------------------------
    def set_language(self, language: str | None) -> None:
        self._language = language or None
        self._detected = None
        self._segment_language_checked = False

    def set_prompt(self, prompt: str | None) -> None:
        self._user_prompt = prompt or None

    # -- clock ----------------------------------------------------------------------------
    @property
    def audio_seconds(self) -> float:
        """Seconds of audio inserted since the transcriber was created."""
        return self._total / SAMPLE_RATE

    @property
    def buffered_seconds(self) -> float:
        return len(self._buffer) / SAMPLE_RATE

    # -- verbs ----------------------------------------------------------------------------
    def insert_audio(self, samples: np.ndarray) -> None:
        samples = np.asarray(samples, dtype=np.float32).reshape(-1)
        if samples.size == 0:
            return
        self._buffer = np.concatenate([self._buffer, samples])
        self._total += samples.size
        self._new_samples += samples.size
        if self._vad is not None:
            for start, prob in self._vad.process(samples):
                if prob >= self.config.vad_threshold:
                    if self._speech_start is None:
                        self._speech_start = start
                    self._last_speech_end = start + FRAME_SECONDS

    def process(self) -> StreamUpdate:
        """Re-transcribe the window if enough new audio arrived; commit what two passes agree on."""
        cfg = self.config
        now = self.audio_seconds
        if self._vad is not None:
            if self._speech_start is None:
                self._drop_before(now - cfg.speech_pad_seconds)
                self._new_samples = len(self._buffer)  # the pad counts towards the first update
                return StreamUpdate((), self._tentative)
            if now - self._last_speech_end >= cfg.endpoint_silence_seconds:
                return self._finalize(until=self._last_speech_end + cfg.speech_pad_seconds)
            if now >= self._speech_done:  # in a pause
                if self._heard_to(self._speech_done):
                    return StreamUpdate((), self._tentative)  # already heard: nothing new
                if self._closing_pass_allowed():
                    # The regular pace goes on from the last regular pass, so the words after a
                    # short pause are not held back by this one (bench_onset: onset 1.02 s -> 0.83 s).
                    pending = self._new_samples
                    update = self._update()
                    self._new_samples = pending
                    return update
            elif (
                cfg.pause_hint_seconds is not None
                and now - self._last_speech_end >= cfg.pause_hint_seconds
                and self._closing_pass_allowed()
            ):
                # Speech has stopped: the closing pass is less than a pad away if it stays
                # stopped, and the regular pace resumes at once if it does not.
                return StreamUpdate((), self._tentative)
        if self._grid is not None:
            return self._update() if self._grid_pass_due() else StreamUpdate((), self._tentative)
        # The quick pace is for a segment's start; a window the trim left short has the text
        # before it as prompt and goes at the normal pace (it still needs the stricter agreement).
        onset = not self._trimmed and self.buffered_seconds < cfg.min_agree_seconds
        chunk = max(
            cfg.onset_chunk_seconds if onset else cfg.min_chunk_seconds, self._backend_chunk
        )
        if (
            self._new_samples < chunk * SAMPLE_RATE
            or self.buffered_seconds < cfg.min_window_seconds
        ):
            return StreamUpdate((), self._tentative)
        return self._update()

    def finish(self) -> StreamUpdate:
        """Commit everything still held back and empty the window."""
        return self._finalize(until=None)

    def clear(self) -> None:
        """Forget buffered audio and tentative words without committing them."""
        self._reset_window()

    # -- internals ------------------------------------------------------------------------
    def _grid_pass_due(self) -> bool:
        """Whether the window has grown by a grid step since the last pass (a block backend).

        Such a backend keeps the blocks it encoded and encodes only new ones, so a pass at a
        whole number of blocks encodes each block once; a pass in the middle of one encodes
        that block open, and again when it settles (two blocks per update instead of one:
        LibriVox through the 0.6B-shaped model took 1.64 instead of 1.16 CPU s per audio s).
        So regular passes hear the window up to its last whole block, and they come as the
        window crosses each ``_grid_step`` (the backend's ``min_update_seconds`` rounded to
        whole blocks), on the audio's clock: counted from the last pass instead, a late pass
        pushed back every pass after it (the gap between updates was 2.04-2.11 s; now 2.00 s).
        Trims cut the window on the grid too (:meth:`_cut_window`).
        """
        if self._vad is not None and self._speech_start is not None:
            self._drop_before(
                self._speech_start - self.config.speech_pad_seconds
            )  # the window's start
        step = self._grid_step
        heard = (
            0.0
            if self._hypothesis_end is None
            else max(0.0, self._hypothesis_end - self._buffer_start)
        )
        due = int(self.buffered_seconds / step + 1e-6)
        return due > int(heard / step + 1e-6) and due * step >= self.config.min_window_seconds

    def _update(self) -> StreamUpdate:
        hypothesis = self._transcribe()
        committed = self._agree(hypothesis)
        committed += self._trim()
        return StreamUpdate(tuple(committed), self._tentative)

    @property
    def _speech_done(self) -> float:
        """Stream time by which all speech so far, and its pad, has been heard."""
        return self._last_speech_end + self.config.speech_pad_seconds

    def _closing_pass_allowed(self) -> bool:
        """Whether to transcribe a pause as soon as its pad is in (see the module doc).

        That pass gives the hypothesis an endpoint or :meth:`finish` commits without another
        one (see :meth:`_heard_to`). Not for backends that asked for fewer updates: every
        pause in speech would cost them one.
        """
        return self._passes_are_cheap and self.buffered_seconds >= self.config.min_window_seconds

    @property
    def _passes_are_cheap(self) -> bool:
        """Whether the backend can afford passes beyond the regular pace (it did not ask for fewer)."""
        return self._backend_chunk <= self.config.min_chunk_seconds

    def _heard_to(self, t: float) -> bool:
        """Whether the latest hypothesis was made on a window reaching stream time ``t``."""
        return (
            self._hypothesis_end is not None
            and self._hypothesis_end >= min(t, self.audio_seconds) - 1e-6
        )

    def _finalize(self, until: float | None) -> StreamUpdate:
        committed: list[Word] = []
        has_speech = self._vad is None or self._speech_start is not None
        # The latest hypothesis already heard all the speech there is (the gate says nothing
        # followed it): its tentative words are what one more pass would give, so commit them.
        speech_done = until
        if until is None:
            speech_done = self.audio_seconds if self._vad is None else self._speech_done
        if has_speech and len(self._buffer) and self._heard_to(speech_done):
            committed = self._accept(list(self._tentative))
        elif has_speech and len(self._buffer):
            if until is not None:
                keep = int(max(0.0, until - self._buffer_start) * SAMPLE_RATE)
                self._buffer = self._buffer[:keep]
            hypothesis = self._transcribe(final=True)
            committed = self._accept(hypothesis)
        self._reset_window()
        return StreamUpdate(tuple(committed), ())

    def _reset_window(self) -> None:
        self._segment_begin = self.audio_seconds
        self._segment_language_checked = False
        self._buffer = np.zeros(0, dtype=np.float32)
        self._buffer_start = self.audio_seconds
        self._new_samples = 0
        self._history = []
        self._trimmed = False
        self._tentative = ()
        self._hypothesis_end = None
        self._speech_start = None

    def _cut_window(self, t: float) -> None:
        """Start the window at stream time ``t``, or on a block backend at the last grid point
        before it, so its blocks stay the ones the backend keeps. The committed words between
        that point and ``t`` stay in the window, dropped from hypotheses as they always are."""
        if self._grid is not None:
            t = self._buffer_start + int((t - self._buffer_start) / self._grid + 1e-6) * self._grid
        self._drop_before(t)

    def _drop_before(self, t: float) -> None:
        """Drop window audio before stream time ``t`` (never past the window's end)."""
        cut = int(round((t - self._buffer_start) * SAMPLE_RATE))
        if cut <= 0:
            return
        cut = min(cut, len(self._buffer))
        self._buffer = self._buffer[cut:]
        self._buffer_start += cut / SAMPLE_RATE

    def _prompt(self) -> str | None:
        outside = [w for w in self._context if not self._held_in_window(w)]
        text = "".join(w.text for w in outside).strip()[-self.config.prompt_chars :]
        parts = [p for p in (self._user_prompt, text) if p]
        return " ".join(parts) if parts else None

    def _transcribe(self, final: bool = False) -> list[Word]:
        if self._vad is not None and self._speech_start is not None:
            # Skip the non-speech before the segment (committed words all lie after its start).
            self._drop_before(self._speech_start - self.config.speech_pad_seconds)
        self._new_samples = 0
        size = len(self._buffer)
        if self._grid is not None and not final:
            size = (
                int(self.buffered_seconds / self._grid + 1e-6)
                * int(round(self._grid * SAMPLE_RATE))
                or size
            )
        self._hypothesis_end = self._buffer_start + size / SAMPLE_RATE
        heard = self._hear(size)
        if not self._forces_prefix and self._misheard_committed(heard):
            # The pass heard committed words as other words, and a decoder copies its own
            # spelling: Whisper base, re-hearing a committed "ill-disposed" as "ild-sposed"
            # (unsure, 0.2), wrote "ild-sposed." again, sure of it (0.9), for the same word
            # later in the window. Committed audio in the window only misleads it now: start
            # the window where the committed words end (they become the prompt) and listen again.
            self._cut_window(self._last_committed_end)
            self._trimmed = True
            if not (final or self._passes_are_cheap):
                # A slow backend (the GGUF one) hears the cut window at its next update instead.
                self._hypothesis_end = None
                return []
            self.rehearings += 1
            heard = self._hear(len(self._buffer))
        return self._fresh(heard)

    def _hear(self, size: int) -> list[Word]:
        """One pass over the window's first ``size`` samples: its words in stream time."""
        if size < SAMPLE_RATE // 10:
            return []
        self.inferences += 1
        language = self._language_for_pass()
        extra = {"prefix": self._window_prefix()} if self._forces_prefix else {}
        words = self.backend.transcribe(
            self._buffer[:size], prompt=self._prompt(), language=language, **extra
        )
        if language is None:
            self._learn_language()
        words = drop_runaway(words, size / SAMPLE_RATE)
        return [w.shifted(self._buffer_start) for w in words]

    def _language_for_pass(self) -> str | None:
        """The language to pass the backend: the set one; with none set, the detected one,
        except for the first pass of each segment over a window long enough to detect on.

        Detecting on every pass cost 3% of the CPU (LibriVox stream: 0.9 of 28 CPU s), and a
        segment's short opening windows are the worst to detect on; so a segment's onset uses
        the language the stream spoke last, and one pass over ``min_agree_seconds`` of audio
        confirms or changes it.
        """
        if self._language is not None or self._detected is None:
            return self._language
        if self._segment_language_checked or self.buffered_seconds < self.config.min_agree_seconds:
            return self._detected
        return None

    def _learn_language(self) -> None:
        found = self.backend.detected_language
        # Only a long enough window, and a sure detection, counts; else detect again next pass.
        if (
            found
            and found[1] >= _LANGUAGE_SURE
            and self.buffered_seconds >= self.config.min_agree_seconds
        ):
            self._detected, self._segment_language_checked = found[0], True

    def _misheard_committed(self, heard: Sequence[Word]) -> bool:
        """Whether ``heard`` gives the window's committed words as other words.

        Words are compared as agreement compares them, joined over each differing stretch (so
        "cold" + "-hearted" matches "cold-hearted"); words only one side has (at the edges of
        the committed stretch, where times are least exact) do not count.
        """
        committed = [
            k
            for k in (normalize_word(w.text) for w in self._context if self._inside_window(w))
            if k
        ]
        if not committed:
            return False
        again = [
            k
            for k in (normalize_word(w.text) for w in heard if not self._after_commit_point(w))
            if k
        ]
        matcher = difflib.SequenceMatcher(None, committed, again, autojunk=False)
        return any(
            tag == "replace" and "".join(committed[i1:i2]) != "".join(again[j1:j2])
            for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        )

    def _window_prefix(self) -> str | None:
        """The committed words the window's speech starts with, for a backend to force.

        Forcing them costs a prefill where hearing them again cost a decode, and the pass cannot
        hear them as other words. Word times inside a pass are estimates (the GGUF backend
        spreads them by characters), so committed words of this segment ending up to
        ``_PREFIX_MARGIN`` before the window's start are forced too: forcing a word whose audio
        has left the window is harmless, leaving out one whose audio is still there would
        have it heard twice.
        """
        text = "".join(w.text for w in self._context if self._held_in_window(w)).strip()
        return text or None

    def _held_in_window(self, word: Word) -> bool:
        """Whether a committed word belongs to the window (forced or heard again), not to the prompt."""
        if self._forces_prefix:
            return word.end > max(self._segment_begin, self._buffer_start - _PREFIX_MARGIN) + _EDGE
        return self._inside_window(word)

    def _inside_window(self, word: Word) -> bool:
        return word.end > self._buffer_start + _EDGE

    def _after_commit_point(self, word: Word) -> bool:
        return word.start > self._last_committed_end - _COMMIT_SLACK

    def _fresh(self, words: Sequence[Word]) -> list[Word]:
        """Words of a hypothesis that are not already committed."""
        # After a forced prefix every word is new; else the committed ones are heard again.
        fresh = (
            list(words)
            if self._forces_prefix
            else [w for w in words if self._after_commit_point(w)]
        )
        # A repeat of the committed tail right at the commit point is the same words heard
        # again (or a decoder loop: "X. X." on a window the endpoint cut); further away it is
        # speech that really repeats ("... he was. He was not").
        if fresh and self._context and fresh[0].start - self._last_committed_end < 1.0:
            tail = [normalize_word(w.text) for w in self._context[-_REPEAT_WORDS:]]
            head = [normalize_word(w.text) for w in fresh[:_REPEAT_WORDS]]
            for n in range(min(len(tail), len(head)), 0, -1):
                if tail[-n:] == head[:n]:
                    fresh = fresh[n:]
                    break
        return fresh

    def _agree(self, hypothesis: list[Word]) -> list[Word]:
        cfg = self.config
        onset = self.buffered_seconds < cfg.min_agree_seconds
        history = self._history
        strict = onset or (bool(history) and history[-1][1])
        need = max(2, cfg.onset_agreement) if strict else 2
        others = [h[0] for h in history[-(need - 1) :]] if len(history) >= need - 1 else []
        latest_floor = (
            cfg.onset_min_probability
            if cfg.onset_latest_probability is None
            else cfg.onset_latest_probability
        )
        agreed = 0
        while others and agreed < len(hypothesis):
            word = hypothesis[agreed]
            same = [o[agreed] for o in others if agreed < len(o)]
            if len(same) < len(others) or any(
                normalize_word(w.text) != normalize_word(word.text) for w in same
            ):
                break
            if strict and (
                min(w.probability for w in [word, *same]) < cfg.onset_min_probability
                or word.probability < latest_floor
            ):
                break
            agreed += 1
        agreed = _whole_words(hypothesis, agreed)
        committed, hypothesis = hypothesis[:agreed], hypothesis[agreed:]
        self._record(committed)
        kept = [(h[0][agreed:], h[1]) for h in history] if agreed else history
        self._history = (kept + [(hypothesis, onset)])[-max(2, cfg.onset_agreement) :]
        self._tentative = tuple(hypothesis)
        return committed

    def _accept(self, words: list[Word]) -> list[Word]:
        self._record(words)
        return words

    def _record(self, words: Sequence[Word]) -> None:
        if not words:
            return
        self._context.extend(words)
        del self._context[:-64]
        self._last_committed_end = max(self._last_committed_end, words[-1].end)

    def _trim(self) -> list[Word]:
        """Shorten the window; returns words it had to commit without agreement (rare)."""
        cfg = self.config
        forced: list[Word] = []
        if self.buffered_seconds <= cfg.trim_seconds:
            return forced
        self._trimmed = True
        inside = [w for w in self._context if w.end > self._buffer_start]
        sentence_ends = [w.end for w in inside if w.text.rstrip().endswith(_SENTENCE_END)]
        if sentence_ends:
            self._cut_window(sentence_ends[-1])
        elif self.buffered_seconds > cfg.max_window_seconds:
            if inside:
                self._cut_window(inside[-1].end)
            if self.buffered_seconds > cfg.max_window_seconds:
                # Nothing agreed for a whole window: commit the settled part of the hypothesis
                # (words ending well before the window's end) so memory stays bounded.
                horizon = self.audio_seconds - 3.0
                latest = self._history[-1][0] if self._history else []
                forced = latest[: _whole_words(latest, sum(1 for w in latest if w.end <= horizon))]
                if forced:
                    self._record(forced)
                    self._history = [(latest[len(forced) :], False)]
                    self._tentative = tuple(latest[len(forced) :])
                self._cut_window(max(self._last_committed_end, horizon - cfg.trim_seconds))
        return forced
