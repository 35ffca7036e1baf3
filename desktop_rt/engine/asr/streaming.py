"""Streaming transcription over a whole-window backend: :class:`StreamingTranscriber`.

Verbs as in whisper_streaming: ``insert_audio``, ``process``, ``finish`` (and ``clear``). Each
``process`` may re-transcribe the sliding window (:mod:`.schedule` decides when); the words two
passes agree on are committed and the rest is the tentative tail (:mod:`.agreement`). A speech
gate (:mod:`.gate`) keeps silence from the model and ends segments; the window (:mod:`.window`)
is trimmed at committed sentence ends, committed text before it becoming the prompt.
Invariant: committed text is emitted once, in audio order, never before its audio came, and
no speech a pass heard is lost at a commit, trim, endpoint, rehearing or finish (only ``clear``
drops words). Word times are stream seconds. docs/design/streaming.md: design, what was tried.
"""

from __future__ import annotations

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE, Word
from desktop_rt.engine.asr.agreement import HypothesisBuffer, OnsetRule, StreamUpdate
from desktop_rt.engine.asr.backend import AsrBackend
from desktop_rt.engine.asr.gate import SegmentGate
from desktop_rt.engine.asr.language import LanguageTracker
from desktop_rt.engine.asr.loops import decoder_looped
from desktop_rt.engine.asr.prompt_misled import (
    Phrase,
    copied_phrases,
    prompt_copy,
    prompt_misled,
    says_again,
)
from desktop_rt.engine.asr.prompt_text import committed_prompt, joined
from desktop_rt.engine.asr.runaway import drop_after, drop_runaway
from desktop_rt.engine.asr.schedule import PassSchedule
from desktop_rt.engine.asr.streaming_config import StreamingConfig
from desktop_rt.engine.asr.trim import trim_window
from desktop_rt.engine.asr.turn_decode import EndedTurn, TurnAudio, decode_turn
from desktop_rt.engine.asr.window import AudioWindow
from desktop_rt.engine.audio.vad import SpeechProbability
from desktop_rt.engine.protocol.events import Respelling

__all__ = ["StreamingConfig", "StreamUpdate", "StreamingTranscriber"]

_UNWRITTEN_SPEECH = 1.0  # speech going on this long past the last word was not written
_DEFAULT_CONFIG = StreamingConfig()


class StreamingTranscriber:
    """Turns a chunked audio stream into committed and tentative words.

    Call order: any number of ``insert_audio`` / ``process`` pairs, then ``finish`` to commit
    what is held back (then, optionally, ``decode_turn``: the turn heard whole). After
    ``finish`` (or ``clear``) the transcriber takes new audio again; the stream clock keeps
    running, so word times stay in stream seconds.
    """

    def __init__(
        self,
        backend: AsrBackend,
        config: StreamingConfig = _DEFAULT_CONFIG,
        speech_probability: SpeechProbability | None = None,
    ):
        self.backend = backend
        self.config = config
        traits = backend.traits
        self._forces_prefix = traits.forces_prefix  # committed words are forced: see _hear
        self._schedule = PassSchedule(config, traits)
        self._window = AudioWindow(grid=self._schedule.grid, forces_prefix=traits.forces_prefix)
        rule = OnsetRule(
            config.onset_agreement,
            config.onset_min_probability,
            config.onset_latest_probability,
            config.onset_span_seconds,
        )
        self._hypotheses = HypothesisBuffer(
            forces_prefix=traits.forces_prefix,
            onset_rule=rule,
            window_start=self._window.start_time,
        )
        self._language = LanguageTracker(config.language, config.min_agree_seconds)
        self._gate = SegmentGate(config, speech_probability) if config.vad else None
        self._user_prompt: str | None = None
        self._respellings: tuple[Respelling, ...] = ()
        self.set_prompt(config.prompt)
        whole = traits.window_seconds if config.turn_decode else None
        self._turn = TurnAudio(whole, config.vad, config.turn_context_seconds) if whole else None
        self._ended: EndedTurn | None = None  # the turn the last finish() ended, to decode
        self.turn_decodes = 0
        """Turns decoded whole (``decode_turn`` calls that ran the model)."""
        self.inferences = 0
        """Passes run over the window (backend calls)."""
        self.rehearings = 0
        """Passes run again on a window cut where committed words end (see ``_transcribe``)."""
        self.unprompted = 0
        """Passes run again without the committed text, which led them astray (see ``_hear``)."""
        self._said_again: set[Phrase] = set()  # prompt phrases this segment's speech repeats
        self._looped = False  # whether the latest pass's decoder looped (see ``_update``)

    # -- settings -------------------------------------------------------------------------
    def set_language(self, language: str | None) -> None:
        self._language.set(language)

    def set_prompt(self, prompt: str | None, respellings: tuple[Respelling, ...] = ()) -> None:
        """The user's prompt; ``respellings`` apply to the committed text that later prompts are
        built from (:mod:`.respelling`), the text already sent staying as it is."""
        self._user_prompt = prompt or None
        self._respellings = respellings

    # -- clock ----------------------------------------------------------------------------
    @property
    def audio_seconds(self) -> float:
        """Seconds of audio inserted since the transcriber was created."""
        return self._window.stream_seconds

    @property
    def buffered_seconds(self) -> float:
        """Seconds of audio in the window."""
        return self._window.seconds

    @property
    def room_seconds(self) -> float:
        """Audio to insert at most before the next ``process`` (:meth:`.PassSchedule.room`)."""
        return self._schedule.room(self._window)

    # -- verbs ----------------------------------------------------------------------------
    def insert_audio(self, samples: np.ndarray) -> None:
        samples = np.asarray(samples, dtype=np.float32).reshape(-1)
        if samples.size == 0:
            return
        turn = self._turn
        if turn is not None:
            if not turn.started:
                turn.begin(self.audio_seconds)
            turn.append(samples)
        self._window.append(samples)
        if self._gate is not None:
            frames = self._gate.feed(samples)
            if turn is not None:
                turn.scored(frames)
                if self._gate.speech_start is not None:
                    turn.heard_speech()

    def process(self) -> StreamUpdate:
        """Re-transcribe the window if enough new audio arrived; commit what two passes agree on."""
        if self._gate is not None:
            gated = self._gated(self._gate)
            if gated is not None:
                return gated
        return self._update() if self._pass_due() else self._idle()

    def finish(self) -> StreamUpdate:
        """Commit everything still held back and empty the window; the turn ends."""
        update = self._finalize(until=None)
        if self._turn is not None:
            self._ended = self._turn.end()
        return update

    def clear(self) -> None:
        """Forget buffered audio and tentative words without committing them."""
        self._reset_window()
        if self._turn is not None:
            self._turn.drop()
        self._ended = None

    @property
    def turn_to_decode(self) -> bool:
        """Whether the turn the last ``finish`` ended is to be decoded whole (``decode_turn``)."""
        return self._ended is not None

    def decode_turn(self) -> tuple[Word, ...] | None:
        """The turn the last ``finish`` ended (the audio since the ``finish`` or ``clear``
        before, heard after the ``turn_context_seconds`` before it), recognised whole as offline
        recognition does a file (:mod:`.turn_decode`): its words in stream time, the turn's
        completed transcript. ``None`` when it is not: ``turn_decode`` off, a backend that
        declares no window, a turn longer than that window or, with the speech gate, holding no
        speech. Runs the model (on the inference thread)."""
        turn, self._ended = self._ended, None
        if turn is None:
            return None
        self.turn_decodes += 1
        language = self._language.for_turn()
        threshold = self.config.vad_threshold
        words = decode_turn(
            self.backend, turn, prompt=self._user_prompt, language=language, threshold=threshold
        )
        return tuple(words)

    # -- state read by tests/engine/asr/test_streaming_endpoints.py --------------------------
    @property
    def _speech_start(self) -> float | None:
        return None if self._gate is None else self._gate.speech_start

    @property
    def _last_speech_end(self) -> float:
        return 0.0 if self._gate is None else self._gate.last_speech_end

    @property
    def _buffer_start(self) -> float:
        return self._window.start

    @property
    def _history(self) -> list[tuple[list[Word], bool]]:
        return self._hypotheses.history

    # -- when to pass -----------------------------------------------------------------------
    def _idle(self) -> StreamUpdate:
        return StreamUpdate((), self._hypotheses.tentative)

    def _gated(self, gate: SegmentGate) -> StreamUpdate | None:
        """What the speech gate decides this call: an update, or ``None`` to go by the schedule.

        Before speech, audio beyond the pad is dropped. Once the speech and its pad are in, a
        closing pass runs at once (the regular pace goes on from the last regular pass, so the
        words after a short pause are not held back by it); after ``pause_hint_seconds`` of
        silence a regular pass waits for that closing one. An endpoint commits the segment.
        """
        cfg, window, schedule = self.config, self._window, self._schedule
        now = self.audio_seconds
        if not gate.in_speech:
            window.drop_before(now - cfg.speech_pad_seconds)
            window.new_samples = len(window)  # the pad counts towards the first update
            return self._idle()
        if gate.endpoint_reached(now):
            return self._finalize(until=gate.speech_done)
        if gate.in_pause(now):
            if schedule.heard_to(gate.speech_done, now):
                return self._idle()  # already heard: nothing new
            if schedule.closing_pass_allowed(window):
                pending = window.new_samples
                update = self._update()
                window.new_samples = pending
                return update
        elif gate.pausing(now) and schedule.closing_pass_allowed(window):
            # The closing pass is less than a pad away if speech stays stopped, and the regular
            # pace resumes at once if it does not.
            return self._idle()
        return None

    def _pass_due(self) -> bool:
        if self._schedule.grid is not None:
            self._skip_to_speech()  # grid steps count from the segment's start
            return self._schedule.grid_pass_due(self._window)
        return self._schedule.regular_pass_due(self._window)

    def _skip_to_speech(self) -> None:
        """Drop the non-speech before the segment (committed words all lie after its start)."""
        start = None if self._gate is None else self._gate.segment_start
        if start is not None:
            self._window.drop_before(start)

    # -- passes -----------------------------------------------------------------------------
    def _update(self) -> StreamUpdate:
        heard, hypotheses = self._transcribe(), self._hypotheses
        if self._looped:  # a decoder loop: no evidence, its words count at the segment's end
            hypotheses.remember(heard)
            return StreamUpdate(
                tuple(trim_window(self._window, self._hypotheses, self.config, self.audio_seconds)),
                hypotheses.tentative,
            )
        onset = self._window.seconds < self.config.min_agree_seconds
        agreed = hypotheses.insert(heard, onset=onset, heard_end=self._schedule.heard_end)
        forced = trim_window(self._window, self._hypotheses, self.config, self.audio_seconds)
        return StreamUpdate(agreed.committed + tuple(forced), self._hypotheses.tentative)

    def _finalize(self, until: float | None) -> StreamUpdate:
        committed: list[Word] = []
        gate, window = self._gate, self._window
        has_speech = gate is None or gate.in_speech
        if until is not None:
            speech_done = until
        else:
            speech_done = self.audio_seconds if gate is None else gate.speech_done
        if has_speech and len(window) and self._schedule.heard_to(speech_done, self.audio_seconds):
            # The latest hypothesis already heard all the speech there is (nothing but silence
            # followed it): its tentative words are what one more pass would give.
            committed = self._hypotheses.commit_tentative()
        elif has_speech and len(window):
            if until is not None:
                window.keep_until(until)
            committed = self._hypotheses.commit(self._transcribe(final=True))
        if has_speech and len(window):
            committed += self._hear_rest(until)
        self._reset_window()
        return StreamUpdate(tuple(committed), ())

    def _hear_rest(self, until: float | None) -> list[Word]:
        """At a segment's end, the speech after the last committed word when the segment's
        passes stopped writing before it (a decoder that ends early on a window holding a long
        pause): one more pass on the window cut where the committed words end. A window with no
        word committed in it would be heard as the final pass heard it: not again."""
        gate, window = self._gate, self._window
        committed = self._hypotheses.committed
        if gate is None or not committed or committed[-1].end <= window.start:
            return []
        if gate.last_speech_end - committed[-1].end < _UNWRITTEN_SPEECH:
            return []
        window.cut(committed[-1].end)
        if until is not None:
            window.keep_until(until)
        if window.seconds < self.config.min_window_seconds:
            return []
        self.rehearings += 1
        return self._hypotheses.commit(self._hear(len(window)))

    def _reset_window(self) -> None:
        self._window.reset()
        self._said_again = set()
        self._language.new_segment()
        self._hypotheses.clear()
        self._schedule.reset()
        if self._gate is not None:
            self._gate.close()

    def _transcribe(self, final: bool = False) -> list[Word]:
        """One pass over the window (a segment's ``final`` one hears all of it): its words.

        A pass that hears the window's committed words as other words has gone astray on
        settled audio, and a decoder copies its own spelling later on: it is thrown away and
        run again on the window cut where the committed words end (they become its prompt).
        A backend that asked for fewer passes hears the cut window at its next update instead.
        """
        window, schedule = self._window, self._schedule
        self._skip_to_speech()
        window.new_samples = 0
        size = schedule.pass_samples(window, final)
        schedule.heard_end = window.start + size / SAMPLE_RATE
        heard = self._hear(size)
        if not self._forces_prefix and self._hypotheses.mishears_committed(heard, window.contains):
            self._hypotheses.remember(heard)  # what it heard after them still counts at the end
            window.cut(self._hypotheses.last_committed_end)
            window.trimmed = True
            if not (final or schedule.passes_are_cheap):
                schedule.heard_end = None
                return []
            self.rehearings += 1
            heard = self._hear(len(window))
        return heard

    def _hear(self, size: int) -> list[Word]:
        """One backend call over the window's first ``size`` samples: its words in stream time."""
        if size < SAMPLE_RATE // 10:
            return []
        seconds = size / SAMPLE_RATE
        outside = [w for w in self._hypotheses.committed if not self._window.holds_committed(w)]
        before = committed_prompt(outside, self.config, self._respellings)
        audio, prompt = self._window.samples[:size], joined(self._user_prompt, before)
        words = self._call(audio, prompt)
        kept = drop_runaway(words, seconds, prompt)
        if before and prompt_misled(kept, before, self._speech_within(seconds), self._said_again):
            words, kept = self._unprompted(audio, seconds, before, kept) or (words, kept)
        self._looped = decoder_looped(words, seconds)
        return self._in_stream(kept)

    def _speech_within(self, seconds: float) -> float:
        """Seconds of gated speech in the window's first ``seconds`` (0 without a gate)."""
        gate, start = self._gate, self._window.start
        return gate.speech_within(start, start + seconds) if gate is not None else 0.0

    def _in_stream(self, words: list[Word]) -> list[Word]:
        """A pass's words in stream time, less any in the silence after the speech."""
        heard = [w.shifted(self._window.start) for w in words]
        if self._gate is not None:
            heard = drop_after(heard, self._gate.last_speech_end)
        return heard

    def _unprompted(
        self, audio: np.ndarray, seconds: float, before: str, kept: list[Word]
    ) -> tuple[list[Word], list[Word]] | None:
        """A pass the committed text ``before`` led astray, heard again without it: its words
        and what ``drop_runaway`` kept of them, or None when it writes the copied text too, a
        word aside (the speech repeats it, and the prompted pass, in context, spells it better).
        What the misled pass heard besides its copy still counts at the segment's end."""
        self.unprompted += 1
        copy, copied = prompt_copy(kept, before, self._said_again), copied_phrases(kept, before)
        words = self._call(audio, self._user_prompt)
        again = drop_runaway(words, seconds, self._user_prompt)
        if copy and says_again(again, copied):
            self._said_again |= copied  # not checked again this segment
            return None
        self._hypotheses.remember(self._in_stream([w for i, w in enumerate(kept) if i not in copy]))
        return words, again

    def _call(self, audio: np.ndarray, prompt: str | None) -> list[Word]:
        """One backend call over ``audio`` (the window's start) with ``prompt``."""
        self.inferences += 1
        window = self._window
        language = self._language.for_pass(window.seconds)
        if self._forces_prefix:
            prefix = self._window_prefix()
            words = self.backend.transcribe(audio, prompt=prompt, language=language, prefix=prefix)
        else:
            words = self.backend.transcribe(audio, prompt=prompt, language=language)
        if language is None:
            self._language.learn(self.backend.detected_language, window.seconds)
        return list(words)

    def _window_prefix(self) -> str | None:
        """The committed words the window's speech starts with, for a backend to force."""
        held = [w for w in self._hypotheses.committed if self._window.holds_committed(w)]
        return "".join(w.text for w in held).strip() or None
