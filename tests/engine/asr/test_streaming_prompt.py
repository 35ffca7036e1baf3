"""What the streaming engine puts in the backend's prompt: committed text, less unsure words."""

from __future__ import annotations

import pytest

from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
from tests.support.scripted_backend import (
    PassStyle,
    ScriptedBackend,
    Truth,
    TruthSpeech,
    TruthWord,
    ramp,
    word_ids,
)
from tests.support.streaming_feed import feed_audio


@pytest.mark.parametrize("floor", [0.0, 0.35])
def test_unsure_committed_words_stay_out_of_the_prompt(floor):
    """A decoder copies a misspelling its prompt holds ("ild-sposed", then "ld-sposed"), so
    committed words less sure than ``prompt_min_probability`` (any piece of a written word)
    are left out of it; the transcript keeps them."""
    first = [TruthWord(0, 0.5, 0.9, hyphenated=True), TruthWord(1, 0.95, 1.25)]
    first += [TruthWord(2, 1.3, 1.6, sentence_end=True)]
    second = [TruthWord(i, 3.5 + 0.35 * (i - 3), 3.8 + 0.35 * (i - 3)) for i in range(3, 9)]
    truth = Truth(tuple(first + second))
    backend = ScriptedBackend(truth, [PassStyle(unsure_onset=1, unsure=0.2)])
    config = StreamingConfig(vad=False, trim_seconds=3.0, prompt_min_probability=floor)
    tr = StreamingTranscriber(backend, config)
    committed = feed_audio(tr, ramp(0, 16000 * 7))  # the first word unsure in every pass
    committed += tr.finish().committed
    assert "".join(w.text for w in committed).startswith(" w0-p0 w1 w2.")
    prompts = [p for _, _, p in backend.calls if p]
    assert prompts, backend.calls
    if floor:
        assert all(p.startswith("w1 w2.") for p in prompts), prompts
    else:
        assert all(p.startswith("w0-p0 w1 w2.") for p in prompts), prompts


def _two_sentences(pause: float) -> Truth:
    """Two sentences of six 0.3 s words, ``pause`` seconds apart."""
    words, t = [], 0.5
    for i in range(12):
        words.append(TruthWord(i, t, t + 0.3, sentence_end=i in (5, 11)))
        t += 0.35 + (pause if i == 5 else 0.0)
    return Truth(tuple(words))


@pytest.mark.parametrize("vad", [False, True])
def test_a_pass_its_prompt_leads_astray_is_heard_again_without_it(vad):
    """Whisper given the sentence before its window can write that sentence again over new
    speech, at word times that look heard (the 10 dB stream: "the conference will begin when
    the" over "I am sorry, there is no call parked"): such a pass is heard again without the
    committed text, and every word is committed once, in order."""
    truth = _two_sentences(pause=1.5)  # with the gate: an endpoint, a new segment after it
    backend = ScriptedBackend(truth, [PassStyle(prompt_led=5)])
    config = StreamingConfig(vad=vad, trim_seconds=3.0)
    speech = TruthSpeech(truth) if vad else None
    tr = StreamingTranscriber(backend, config, speech_probability=speech)
    committed = feed_audio(tr, ramp(0, 16000 * 8)) + list(tr.finish().committed)
    written = [i for w in committed for _, i in word_ids(w.text)]
    assert written == list(range(12)), [w.text for w in committed]
    calls = backend.calls  # (start, end, prompt): the same window again, with no prompt
    assert any(a[2] and b == (*a[:2], None) for a, b in zip(calls, calls[1:], strict=False)), calls
    assert tr.unprompted
