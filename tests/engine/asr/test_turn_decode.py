"""A turn decoded whole when it ends (engine/asr/turn_decode.py, through StreamingTranscriber).

The scripted backend of :mod:`tests.support.scripted_backend` tells each call apart by the
audio it hears (every sample holds its own index), so these tests see which audio the whole
decode heard, with which prompt, and that its words are the ones it returns. The real model's
whole decode of a clip reads as offline recognition of the same clip (WER bounds).
"""

from __future__ import annotations

import numpy as np
import pytest

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.asr.backend import BackendTraits
from desktop_rt.engine.asr.file_transcriber import FileTranscriber
from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
from desktop_rt.engine.asr.turn_decode import EndedTurn, TurnAudio
from tests.support.clips import read_clip, reference_text, wer
from tests.support.scripted_backend import (
    PassStyle,
    ScriptedBackend,
    Truth,
    TruthSpeech,
    TruthWord,
    ramp,
    word_ids,
)

WINDOW = BackendTraits(window_seconds=30.0)
PAD = StreamingConfig().speech_pad_seconds


def sentence(first: int, n: int, t: float) -> list[TruthWord]:
    """``n`` words of 0.3 s from ``t`` on, 0.05 s apart, the last ending a sentence."""
    return [
        TruthWord(first + i, t + i * 0.35, t + i * 0.35 + 0.3, sentence_end=i == n - 1)
        for i in range(n)
    ]


class Feed:
    """Ramp audio of one truth into a transcriber, 0.1 s at a time, as the worker feeds it."""

    def __init__(self, truth: Truth, traits: BackendTraits = WINDOW, **config: object):
        self.backend = ScriptedBackend(truth, traits=traits)
        self.transcriber = StreamingTranscriber(
            self.backend, StreamingConfig(**config), TruthSpeech(truth)
        )
        self.at = 0
        self.committed = ""

    def until(self, seconds: float) -> None:
        step = SAMPLE_RATE // 10
        while self.at < int(seconds * SAMPLE_RATE):
            self.transcriber.insert_audio(ramp(self.at, step))
            self.at += step
            self.committed += self.transcriber.process().committed_text

    def finish(self) -> None:
        self.committed += self.transcriber.finish().committed_text

    def from_now_on(self, *styles: PassStyle) -> None:
        """The backend's next calls use ``styles`` (the last one repeated)."""
        self.backend.styles = [PassStyle()] * len(self.backend.calls) + list(styles)


def ids(text: str) -> list[int]:
    return [i for kind, i in word_ids(text) if kind == "w"]


def test_the_whole_decode_hears_the_turns_speech_once_and_its_words_are_returned():
    truth = Truth(tuple(sentence(0, 10, 0.5)))
    feed = Feed(truth)
    feed.until(6.0)  # the speech (0.5-3.95 s), then an endpoint: the streamed words are in
    assert ids(feed.committed) == list(range(10))
    feed.finish()
    assert feed.transcriber.turn_to_decode
    feed.from_now_on(PassStyle(misheard=tuple(range(10))))  # the decode writes other words
    words = feed.transcriber.decode_turn()
    assert words is not None
    assert [w.text for w in words] == [f" w{i}x1" for i in range(10)]
    start, end, prompt = feed.backend.calls[-1]
    assert start == pytest.approx(0.5 - PAD, abs=0.04)  # its first speech, less the pad
    assert end == pytest.approx(3.95 + PAD, abs=0.04)  # its last speech, and the pad
    assert prompt is None  # nothing came before this turn
    assert words[0].start >= 0.5 - PAD and words[-1].end <= end  # stream time
    assert feed.transcriber.turn_decodes == 1
    assert feed.transcriber.decode_turn() is None  # once per finish


def test_the_decode_is_prompted_with_the_users_prompt_not_the_text_streamed_before():
    truth = Truth(tuple(sentence(0, 5, 0.5) + sentence(5, 5, 3.8)))
    feed = Feed(truth, prompt="Names: Dashwood.")
    feed.until(3.5)
    feed.finish()
    assert feed.transcriber.decode_turn() is not None
    feed.until(8.5)
    feed.finish()
    words = feed.transcriber.decode_turn()
    assert words is not None and ids("".join(w.text for w in words)) == list(range(5, 10))
    *_, prompt = feed.backend.calls[-1]
    assert prompt == "Names: Dashwood."  # a streamed misspelling would be copied


@pytest.mark.parametrize("swallow", [0.0, 3.0], ids=["timed", "stretched_back"])
@pytest.mark.parametrize("context", [10.0, 1.5, 0.0])
def test_the_decode_hears_the_audio_before_the_turn_and_returns_only_the_turns_words(
    context, swallow
):
    """``stretched_back``: the decode starts each word up to 3 s early, back over the pause and
    past the turn's start, as Whisper does after a pause: the word is still the turn's."""
    truth = Truth(tuple(sentence(0, 5, 0.5) + sentence(5, 5, 3.8)))
    feed = Feed(truth, turn_context_seconds=context)
    feed.until(3.5)  # the first sentence (0.5-2.2 s) and its endpoint
    feed.finish()
    assert feed.transcriber.decode_turn() is not None
    feed.until(7.0)
    feed.finish()
    feed.from_now_on(PassStyle(swallow=swallow))
    words = feed.transcriber.decode_turn()
    assert words is not None and ids("".join(w.text for w in words)) == list(range(5, 10))
    assert all(w.end > 3.5 for w in words)  # stream time, in the turn
    start, end, _ = feed.backend.calls[-1]
    first_heard = max(0.5 - PAD, 3.5 - context)  # speech (less its pad) in the context or after
    assert start == pytest.approx(first_heard if context else 3.5, abs=0.04)
    assert end == pytest.approx(3.8 + 1.7 + PAD, abs=0.04)  # the speech's end, and its pad


def test_speech_the_decoder_stopped_before_is_heard_again_after_its_last_word():
    truth = Truth(tuple(sentence(0, 12, 0.5)))
    feed = Feed(truth)
    feed.until(6.5)
    feed.finish()
    feed.from_now_on(PassStyle(stop_early=5), PassStyle())
    words = feed.transcriber.decode_turn()
    assert words is not None and ids("".join(w.text for w in words)) == list(range(12))
    (first, _, _), (rest, _, prompt) = feed.backend.calls[-2:]
    assert rest > first and prompt is not None and "w6" in prompt


@pytest.mark.parametrize(
    ("traits", "config"),
    [
        (WINDOW, {"turn_decode": False}),  # the setting is off
        (BackendTraits(), {}),  # the backend declares no window
        (BackendTraits(window_seconds=3.0), {}),  # the turn is longer than the window
    ],
)
def test_no_whole_decode_when_the_turn_cannot_be_heard_whole(traits, config):
    feed = Feed(Truth(tuple(sentence(0, 10, 0.5))), traits, **config)
    feed.until(5.0)
    calls = len(feed.backend.calls)
    feed.finish()
    assert not feed.transcriber.turn_to_decode
    assert feed.transcriber.decode_turn() is None
    assert len(feed.backend.calls) == calls
    assert ids(feed.committed) == list(range(10))  # the streamed words are all there


def test_a_turn_without_speech_or_cleared_is_not_decoded():
    truth = Truth(tuple(sentence(0, 4, 5.0)))
    feed = Feed(truth)
    feed.until(3.0)  # silence only
    feed.finish()
    assert feed.transcriber.decode_turn() is None
    feed.until(6.0)  # speech, then the turn is cleared
    feed.transcriber.clear()
    feed.finish()
    assert feed.transcriber.decode_turn() is None
    assert feed.transcriber.turn_decodes == 0


def test_without_a_speech_gate_the_whole_turn_is_heard():
    truth = Truth(tuple(sentence(0, 4, 0.5)))
    backend = ScriptedBackend(truth, traits=WINDOW)
    transcriber = StreamingTranscriber(backend, StreamingConfig(vad=False))
    transcriber.insert_audio(ramp(0, 3 * SAMPLE_RATE))
    transcriber.finish()
    streamed = len(backend.calls)
    words = transcriber.decode_turn()
    assert words is not None and ids("".join(w.text for w in words)) == list(range(4))
    start, end, _ = backend.calls[streamed]
    assert start == 0.0 and end >= 2.95  # all of it (the last part of a frame aside)


def test_turn_audio_keeps_whole_gate_frames_up_to_its_limit_and_forgets_them_after():
    turn = TurnAudio(1.0, gated=True)
    turn.begin(2.0)  # stream sample 32000, inside gate frame 62 (frames are 512 samples)
    turn.append(np.ones(SAMPLE_RATE // 2, dtype=np.float32))
    frames = [(k * 512 / SAMPLE_RATE, k / 100) for k in range(62, 77)]
    turn.scored(frames)
    turn.heard_speech()
    ended = turn.end()
    assert isinstance(ended, EndedTurn)
    assert ended.start == 63 * 512 / SAMPLE_RATE  # from the first frame that starts in it
    assert ended.scores == tuple(k / 100 for k in range(63, 77))
    assert len(ended.audio) == 14 * 512  # exactly the frames scored
    assert turn.end() is None  # the next turn starts empty
    turn.begin(3.0)
    turn.append(np.ones(SAMPLE_RATE // 2, dtype=np.float32))
    assert turn.end() is None  # the gate heard no speech in it
    turn.begin(4.0)
    turn.append(np.ones(SAMPLE_RATE + 1, dtype=np.float32))  # past the limit: let go
    turn.heard_speech()
    assert turn.end() is None
    ungated = TurnAudio(1.0, gated=False)
    ungated.begin(5.0)
    ungated.append(np.ones(100, dtype=np.float32))
    whole = ungated.end()
    assert whole is not None and (whole.start, whole.scores, len(whole.audio)) == (5.0, None, 100)


# ---- the real model -------------------------------------------------------------------------


def _streamed_turn(backend, audio: np.ndarray) -> tuple[str, str]:
    """One turn of ``audio`` streamed 0.5 s at a time, then finished: its streamed text and its
    whole decode's text."""
    transcriber = StreamingTranscriber(backend)
    streamed = ""
    for i in range(0, len(audio), SAMPLE_RATE // 2):
        transcriber.insert_audio(audio[i : i + SAMPLE_RATE // 2])
        streamed += transcriber.process().committed_text
    streamed += transcriber.finish().committed_text
    words = transcriber.decode_turn()
    assert words is not None
    return streamed, "".join(w.text for w in words)


@pytest.mark.parametrize("name", ["beckett", "ss-0870", "ss-0920"])
def test_a_turn_decoded_whole_reads_as_offline_recognition(whisper_backend, name):
    quiet = np.zeros(SAMPLE_RATE // 2, dtype=np.float32)  # held before and after the speech
    audio = np.concatenate([quiet, read_clip(name), quiet])
    streamed, whole = _streamed_turn(whisper_backend, audio)
    offline = FileTranscriber(whisper_backend).transcribe([audio]).text  # the same audio
    reference = reference_text(name)
    assert streamed.strip(), "the turn was streamed as well"
    assert wer(offline, whole) <= 0.1, (whole, offline)
    assert wer(reference, whole) <= wer(reference, offline) + 0.02, (whole, offline)


def test_turn_audio_keeps_the_context_before_a_turn_with_its_scores():
    turn = TurnAudio(2.0, gated=True, context=0.5)
    turn.begin(0.0)
    second = np.arange(SAMPLE_RATE, dtype=np.float32)
    turn.append(second)
    turn.scored([(k * 512 / SAMPLE_RATE, 0.0) for k in range(31)])  # 31 whole frames in 1 s
    assert turn.end() is None  # no speech: not decoded, but kept as the next turn's context
    turn.begin(1.0)
    turn.append(np.full(SAMPLE_RATE // 2, -1.0, dtype=np.float32))
    turn.scored([(k * 512 / SAMPLE_RATE, 0.9) for k in range(31, 46)])
    turn.heard_speech()
    ended = turn.end()
    assert ended is not None
    first = -(-(SAMPLE_RATE // 2) // 512)  # the first whole frame of the last 0.5 s before it
    assert ended.start == first * 512 / SAMPLE_RATE
    assert ended.turn_start == 32 * 512 / SAMPLE_RATE  # the first frame that starts in the turn
    assert ended.scores == (0.0,) * (31 - first) + (0.9,) * 15  # frame 31 straddles the two
    assert np.array_equal(ended.audio[:512], second[first * 512 : first * 512 + 512])
    assert len(ended.audio) == (46 - first) * 512
    turn.begin(1.5)
    turn.append(np.ones(33_600, dtype=np.float32))  # 2.1 s, past the limit: let go
    turn.scored([(k * 512 / SAMPLE_RATE, 0.9) for k in range(46, 112)])
    turn.heard_speech()
    assert turn.end() is None
    turn.begin(3.6)
    turn.append(np.ones(SAMPLE_RATE // 10, dtype=np.float32))
    turn.scored([(k * 512 / SAMPLE_RATE, 0.9) for k in range(112, 115)])
    turn.heard_speech()
    after = turn.end()  # its context: the last 0.5 s of the turn that was let go
    assert after is not None and after.context == pytest.approx(0.5, abs=0.04)
    assert len(after.audio) == (115 - 97) * 512  # from frame 97, the first of those 0.5 s
