"""StreamingTranscriber on the real embedded model and real speech: accuracy against offline,
silence and noise, finish and clear, the prompt, the language setting, a recorded run.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from desktop_rt.engine.asr.spelling import normalize_word
from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
from tests.support.clips import (
    DATA,
    librivox_stream,
    offline_text,
    read_clip,
    reference_text,
    wer,
    words_of,
)
from tests.support.streaming_feed import CHUNK, stream


@pytest.fixture(scope="module")
def librivox():
    return librivox_stream()


@pytest.fixture(scope="module")
def offline_wer(whisper_backend, librivox):
    audio, reference = librivox
    return wer(reference, "".join(w.text for w in whisper_backend.transcribe(audio)))


@pytest.mark.slow
def test_librivox_stream_matches_offline_accuracy(whisper_backend, librivox, offline_wer):
    audio, reference = librivox
    committed, updates = stream(StreamingTranscriber(whisper_backend), audio)
    text = "".join(w.text for w in committed)
    assert wer(reference, text) <= offline_wer + 0.02, text
    # Captions arrive while audio is still coming, not only at the end.
    assert sum(1 for u in updates[:-1] if u.committed) >= 5
    assert any(u.tentative for u in updates)


@pytest.mark.slow
def test_trims_and_commits_neither_repeat_nor_drop_words(whisper_backend, librivox, offline_wer):
    audio, reference = librivox
    # No VAD endpoints and a short window: the engine must trim mid-speech many times.
    config = StreamingConfig(vad=False, trim_seconds=4.0, max_window_seconds=8.0)
    transcriber = StreamingTranscriber(whisper_backend, config)
    committed, _ = stream(transcriber, audio)
    text = "".join(w.text for w in committed)
    # Windows this short cost Whisper base some spelling ("ill-sposed"); a dropped or doubled
    # phrase would cost far more than these 3.5 points.
    assert wer(reference, text) <= offline_wer + 0.035, text
    # Stream order: each committed word starts after the one before it began (a re-emitted
    # word from before a trim would jump back in time).
    starts = [w.start for w in committed]
    assert all(b >= a - 0.05 for a, b in zip(starts, starts[1:], strict=False)), starts
    norm = [normalize_word(w.text) for w in committed]
    repeats = [
        norm[i]
        for i in range(1, len(norm))
        if norm[i] == norm[i - 1] and norm[i] not in ("had", "that")
    ]
    assert repeats == []
    assert transcriber.buffered_seconds == 0.0


def test_committed_words_are_final_and_tentative_is_the_rest(whisper_backend):
    audio = read_clip("beckett")
    transcriber = StreamingTranscriber(whisper_backend)
    seen_committed: list[str] = []
    for i in range(0, len(audio), CHUNK):
        transcriber.insert_audio(audio[i : i + CHUNK])
        update = transcriber.process()
        seen_committed.extend(w.text for w in update.committed)
        # The caption is always the committed words followed by the tentative tail.
        caption = "".join(seen_committed) + update.tentative_text
        assert caption.startswith("".join(seen_committed))
    seen_committed.extend(w.text for w in transcriber.finish().committed)
    assert wer(reference_text("beckett"), "".join(seen_committed)) < 0.35


@pytest.mark.parametrize("kind", ["silence", "white-noise", "hum"])
def test_silence_and_steady_noise_give_no_text(whisper_backend, kind):
    rng = np.random.default_rng(0)
    n = 16000 * 10
    audio = {
        "silence": np.zeros(n, dtype=np.float32),
        "white-noise": (rng.standard_normal(n) * 0.05).astype(np.float32),
        "hum": (0.1 * np.sin(2 * np.pi * 60 * np.arange(n) / 16000)).astype(np.float32),
    }[kind]
    transcriber = StreamingTranscriber(whisper_backend)
    committed, updates = stream(transcriber, audio)
    assert committed == []
    assert all(not u.tentative for u in updates)
    assert transcriber.inferences == 0  # the gate kept it all from the model


def test_finish_flushes_held_back_words_and_clear_drops_them(whisper_backend):
    audio = read_clip("ss-0880")  # "he was not an ill disposed young man"
    t = StreamingTranscriber(whisper_backend, StreamingConfig(vad=False))
    t.insert_audio(audio)
    assert t.process().committed == ()  # one pass: nothing agreed yet, all held back
    update = t.finish()
    # The held-back words, all of them, once: what the model hears in the whole clip.
    offline = offline_text(whisper_backend, audio)
    assert len(words_of(update.committed_text)) == len(words_of(offline)), update
    assert wer(offline, update.committed_text) <= 0.15, update  # one word of 8 may differ
    t.insert_audio(audio)
    t.process()
    t.clear()
    assert t.finish().committed == ()
    assert t.audio_seconds == pytest.approx(2 * len(audio) / 16000)


@pytest.mark.parametrize("upto", [3, 5])  # the third time, fed up to "an" / "ill-disposed"
def test_a_prompt_never_makes_the_model_write_ahead(whisper_backend, upto):
    """One sentence said three times, the third cut after a word, then a pause. The prompt (the
    committed text) holds the sentence, and Whisper goes on writing it into the pause: no word
    the audio has not carried may be committed, and none it carried may be lost."""
    clip = read_clip("ss-0880")
    one = np.concatenate([clip, np.zeros(4800, dtype=np.float32)])
    said = list(whisper_backend.transcribe(one))  # the words of one sentence, and their times
    stop = 2 * len(one) / 16000 + said[upto].end - 0.06  # none of the next word's onset
    audio = np.concatenate(
        [np.tile(one, 3)[: int(stop * 16000)], np.zeros(24000, dtype=np.float32)]
    )
    heard = "".join(w.text for w in said) * 2 + "".join(w.text for w in said[: upto + 1])
    tr = StreamingTranscriber(whisper_backend, StreamingConfig(language="en"))
    committed: list = []
    for i in range(0, len(audio), CHUNK):
        tr.insert_audio(audio[i : i + CHUNK])
        committed += tr.process().committed
        assert all(w.start < tr.audio_seconds for w in committed)
    committed += tr.finish().committed
    text = "".join(w.text for w in committed)
    assert len(words_of(text)) <= len(words_of(heard)), text  # nothing written ahead
    assert wer(heard, text) <= 0.1, text  # nothing lost: a sentence would cost 0.4


def test_language_setting_reaches_the_model(whisper_backend):
    audio = read_clip("ss-0880")

    def run(language):
        t = StreamingTranscriber(whisper_backend, StreamingConfig(vad=False))
        t.set_language(language)
        t.set_prompt("Sense and Sensibility, by Jane Austen.")
        t.insert_audio(audio)
        return t.finish().committed_text

    english = run("en")
    assert wer(offline_text(whisper_backend, audio, language="en"), english) <= 0.25, english
    # Forcing another language makes Whisper write in it: the setting is not ignored.
    assert words_of(run("de")) != words_of(english)


@pytest.mark.slow
def test_a_recorded_run_that_committed_a_copied_mishearing(whisper_backend, librivox, offline_wer):
    """Replays the steps of a 2x-pace benchmark run (tests/data/librivox-2x-schedule.json). Its
    windows re-heard the committed "ill-disposed" as "ild-sposed" and the engine then committed
    "ild-sposed." for the sentence's last word (WER 5.6%); now such a pass is run again. Which
    windows mishear depends on the CPU's kernels, so only the accuracy is asserted here; the
    rehearing itself is tested on a scripted backend in test_streaming_rehearing.py."""
    audio, reference = librivox
    schedule = json.loads((DATA / "librivox-2x-schedule.json").read_text())["schedule"]
    tr = StreamingTranscriber(whisper_backend)
    committed, prev = [], 0
    for i, upto in enumerate(schedule):
        tr.insert_audio(audio[prev * CHUNK : upto * CHUNK])
        prev = upto
        committed += (tr.finish() if i == len(schedule) - 1 else tr.process()).committed
    text = "".join(w.text for w in committed)
    assert wer(reference, text) <= offline_wer + 0.01, text  # one more wrong word is 0.014
