"""StreamingTranscriber on the real embedded model and real speech."""

from __future__ import annotations

import json

import numpy as np
import pytest

from desktop_rt.engine.asr.backend import BackendTraits
from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber, normalize_word
from tests.support.clips import DATA, librivox_stream, read_clip, reference_text, wer, words_of

CHUNK = 1600  # 100 ms


def stream(transcriber: StreamingTranscriber, audio: np.ndarray):
    """Feed ``audio`` in 100 ms chunks; return (committed words, every update)."""
    committed, updates = [], []
    for i in range(0, len(audio), CHUNK):
        transcriber.insert_audio(audio[i : i + CHUNK])
        update = transcriber.process()
        updates.append(update)
        committed.extend(update.committed)
    final = transcriber.finish()
    updates.append(final)
    committed.extend(final.committed)
    return committed, updates


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


def offline_text(backend, audio: np.ndarray, **options) -> str:
    """What the model writes for the whole clip at once, on this machine's CPU: a transcript
    to compare a stream with (the exact words differ between CPUs' int8 kernels)."""
    return "".join(w.text for w in backend.transcribe(audio, **options))


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


def _words(text: str, step: float = 0.3):
    from desktop_rt.core_types import Word

    return [Word(" " + t, i * step, i * step + step * 0.9) for i, t in enumerate(text.split())]


def test_decoder_loops_are_cut_but_real_repeats_stay():
    from desktop_rt.engine.asr.streaming import drop_runaway

    looped = _words("fail better.", step=0.3) + [  # said once, then written over and over
        w.shifted(0.6) for w in _words("fail better. " * 30, step=0.05)
    ]
    kept = [w.text.strip() for w in drop_runaway(looped, duration=2.0)]
    assert kept == ["fail", "better.", "fail", "better."]
    real = _words("no no no we said that that is it")
    assert drop_runaway(real, duration=10.0) == real
    # Words placed after the audio ends are invented.
    assert [w.text for w in drop_runaway(_words("one two three four"), duration=0.7)] == [
        " one",
        " two",
        " three",
    ]
    # A whole sentence written again in a fraction of its time is a loop (seen on a window cut
    # at an endpoint); said again at its pace, it is speech.
    sentence = "he might even have been made amiable himself."
    again = [w.shifted(1.6) for w in _words(sentence, step=0.05)]
    kept = [w.text.strip() for w in drop_runaway(_words(sentence, step=0.2) + again, 5.0)]
    assert kept == sentence.split()
    twice = _words(f"{sentence} {sentence}", step=0.2)
    assert drop_runaway(twice, duration=5.0) == twice


class _GuessingBackend:
    """Guesses at a segment's onset (windows under 1.8 s), then hears it right.

    ``guess_probability`` is how sure the model is of its guess.
    """

    traits = BackendTraits()
    detected_language = None

    def __init__(self, guess_probability: float):
        self.windows: list[float] = []
        self.guess_probability = guess_probability

    def transcribe(self, audio, *, prompt=None, language=None):
        from desktop_rt.core_types import Word

        seconds = len(audio) / 16000
        self.windows.append(round(seconds, 2))
        if seconds < 1.8:
            words = [
                Word(w.text, w.start, w.end, self.guess_probability)
                for w in _words("how do you married")
            ]
        else:
            words = _words("had he married a more amiable woman")
        return [w for w in words if w.start < seconds]

    def close(self):
        pass


def _feed(tr: StreamingTranscriber, seconds: float) -> list:
    committed = []
    for _ in range(int(seconds * 10)):
        tr.insert_audio(np.zeros(1600, dtype=np.float32))
        committed += tr.process().committed
    return committed


def test_unsure_first_guesses_of_a_segment_are_not_committed():
    backend = _GuessingBackend(guess_probability=0.2)
    committed = _feed(StreamingTranscriber(backend, StreamingConfig(vad=False)), 4.0)
    # Onset updates every 0.3 s once the window holds 0.9 s; the short windows agree...
    assert backend.windows[:4] == [0.9, 1.2, 1.5, 1.8]
    text = " ".join(w.text.strip() for w in committed)
    assert text.startswith("had he married"), text  # ...but the model is unsure of them


def test_onset_words_commit_when_two_short_windows_agree_with_confidence():
    backend = _GuessingBackend(guess_probability=0.9)
    tr = StreamingTranscriber(backend, StreamingConfig(vad=False))
    committed = []
    for _ in range(16):  # windows of 0.9, 1.2 and 1.5 s
        tr.insert_audio(np.zeros(1600, dtype=np.float32))
        update = tr.process()
        if update.committed and not committed:
            first_at = tr.buffered_seconds
        committed += update.committed
    assert [w.text.strip() for w in committed][:2] == ["how", "do"]  # confident guesses are taken
    assert first_at < StreamingConfig().min_agree_seconds  # from onset windows, not after 2 s
    two = StreamingTranscriber(_GuessingBackend(0.9), StreamingConfig(vad=False, onset_agreement=4))
    assert _feed(two, 1.2) == []  # four hypotheses are needed when asked for


class _GrowingConfidenceBackend:
    """The same onset words every window, each window surer of them than the one before."""

    traits = BackendTraits()
    detected_language = None

    def __init__(self, confidences: list[float]):
        self.confidences = confidences
        self.calls = 0

    def transcribe(self, audio, *, prompt=None, language=None):
        from desktop_rt.core_types import Word

        p = self.confidences[min(self.calls, len(self.confidences) - 1)]
        self.calls += 1
        return [
            Word(w.text, w.start, w.end, p)
            for w in _words("and mister john")
            if w.start < len(audio) / 16000
        ]

    def close(self):
        pass


@pytest.mark.parametrize(
    ("confidences", "commits_at"),
    [
        ([0.55, 0.63], 1.2),  # both over 0.5, the newest over 0.6: the second window commits
        (
            [0.55, 0.55, 0.55, 0.55, 0.65],
            2.4,
        ),  # the newest must reach 0.6 (windows 0.9 ... 1.8, 2.4)
        ([0.45, 0.9, 0.9], 1.5),  # every agreeing hypothesis must reach 0.5
    ],
)
def test_onset_agreement_needs_every_hypothesis_sure_and_the_newest_surer(confidences, commits_at):
    tr = StreamingTranscriber(_GrowingConfidenceBackend(confidences), StreamingConfig(vad=False))
    first_at = None
    for _ in range(30):
        tr.insert_audio(np.zeros(1600, dtype=np.float32))
        if tr.process().committed and first_at is None:
            first_at = round(tr.buffered_seconds, 1)
    assert first_at == commits_at


class _SlowBackend(_GuessingBackend):
    """A backend that can only afford an update per 2 s of new audio."""

    traits = BackendTraits(min_update_seconds=2.0)


def test_a_backend_sets_the_least_audio_per_update():
    slow = _SlowBackend(guess_probability=0.9)
    _feed(StreamingTranscriber(slow, StreamingConfig(vad=False)), 6.0)
    assert slow.windows == [2.0, 4.0, 6.0]  # not every 0.3 s / 0.6 s as for Whisper


class _ScriptedBackend:
    """Returns the next hypothesis of a script for each window (times on a 0.1 s grid)."""

    traits = BackendTraits()
    detected_language = None

    def __init__(self, script: list[list[str]]):
        self.script = script
        self.calls = 0

    def transcribe(self, audio, *, prompt=None, language=None):
        from desktop_rt.core_types import Word

        pieces = self.script[min(self.calls, len(self.script) - 1)]
        self.calls += 1
        return [Word(t, 0.1 * i, 0.1 * i + 0.08) for i, t in enumerate(pieces)]

    def close(self):
        pass


def test_half_of_a_hyphenated_word_is_not_committed_alone():
    backend = _ScriptedBackend(
        [
            [" is", " to", " be", " ild", "-sp"],
            [" is", " to", " be", " ild", "-sposed."],
            [" is", " to", " be", " ill", "-disposed."],
            [" is", " to", " be", " ill", "-disposed."],
        ]
    )
    tr = StreamingTranscriber(
        backend, StreamingConfig(vad=False, min_window_seconds=0.0, min_agree_seconds=0.0)
    )
    committed = _feed(tr, 2.4)
    assert backend.calls == 4
    assert "".join(w.text for w in committed) == " is to be ill-disposed."


def test_finish_commits_a_hypothesis_that_heard_everything_without_another_pass():
    backend = _ScriptedBackend([[" he", " was", " not"], [" an", " ill", "-disposed"]])
    tr = StreamingTranscriber(
        backend, StreamingConfig(vad=False, min_window_seconds=0.0, min_agree_seconds=0.0)
    )
    tr.insert_audio(np.zeros(16000, dtype=np.float32))
    assert tr.process().tentative_text == " he was not"
    assert "".join(w.text for w in tr.finish().committed) == " he was not"
    assert backend.calls == 1  # nothing was inserted after that hypothesis: no second pass
    tr.insert_audio(np.zeros(16000, dtype=np.float32))
    tr.process()
    tr.insert_audio(np.zeros(1600, dtype=np.float32))  # audio no hypothesis has heard
    assert "".join(w.text for w in tr.finish().committed) == " an ill-disposed"
    assert backend.calls == 3


class _MishearingBackend:
    """Hears a sentence whose words lie ``step`` seconds apart in the stream. From pass
    ``mishear_from`` on, a window that still holds the sentence's start hears "ill-disposed" as
    "ild-sposed", both times (a decoder copying itself); a window cut later hears it right.
    The window's stream position comes from the audio (:func:`_ramp`)."""

    traits = BackendTraits()
    detected_language = None

    SENTENCE = [
        " He",
        " was",
        " not",
        " an",
        " ill",
        "-disposed",
        " young",
        " man,",
        " unless",
        " to",
        " be",
        " ill",
        "-disposed.",
    ]

    def __init__(self, step: float, mishear_from: int):
        self.step, self.mishear_from = step, mishear_from
        self.calls: list[tuple[float, float, str | None]] = []  # (window start, seconds, prompt)

    def transcribe(self, audio, *, prompt=None, language=None):
        from desktop_rt.core_types import Word

        start, seconds = round(float(audio[0]) * 1e6) / 16000, len(audio) / 16000
        self.calls.append((start, seconds, prompt))
        misheard = start == 0 and len(self.calls) >= self.mishear_from
        words = []
        for i, text in enumerate(self.SENTENCE):
            t = self.step * i
            if start - 0.05 <= t and t + 0.08 <= start + seconds:
                if misheard:
                    text = text.replace("ill", "ild").replace("-disposed", "-sposed")
                words.append(Word(text, t - start, t - start + 0.08))
        return words


def _ramp(seconds: float) -> np.ndarray:
    """Audio whose every sample holds its own index (over 10**6)."""
    return (np.arange(int(seconds * 16000)) / 1e6).astype(np.float32)


def _feed_ramp(tr: StreamingTranscriber, audio: np.ndarray) -> list:
    committed = []
    for i in range(0, len(audio), CHUNK):
        tr.insert_audio(audio[i : i + CHUNK])
        committed += tr.process().committed
    return committed


SENTENCE = " He was not an ill-disposed young man, unless to be ill-disposed."


def test_a_pass_that_mishears_committed_words_is_run_again_after_them():
    backend = _MishearingBackend(step=0.1, mishear_from=3)
    tr = StreamingTranscriber(
        backend, StreamingConfig(vad=False, min_window_seconds=0.0, min_agree_seconds=0.0)
    )
    committed = _feed_ramp(tr, _ramp(3.0))
    committed += tr.finish().committed
    assert "".join(w.text for w in committed) == SENTENCE
    assert tr.rehearings == 1
    # Passes 1 and 2 (0.6 and 1.2 s) committed "He was not an ill-disposed"; pass 3 misheard
    # it and ran again at once on the window after it, with it as the prompt.
    (start, _, _), (again, _, prompt) = backend.calls[2], backend.calls[3]
    assert start == 0 and again == pytest.approx(0.58, abs=0.01)
    assert prompt == "He was not an ill-disposed"


def test_a_slow_backend_hears_the_cut_window_at_its_next_update_and_loses_nothing():
    backend = _MishearingBackend(step=0.5, mishear_from=4)
    backend.traits = BackendTraits(min_update_seconds=2.0)
    tr = StreamingTranscriber(
        backend, StreamingConfig(vad=False, min_window_seconds=0.0, min_agree_seconds=0.0)
    )
    committed = _feed_ramp(tr, _ramp(8.0))  # passes at 2, 4, 6 and 8 s; the fourth mishears
    assert len(backend.calls) == 4 and tr.rehearings == 0  # no extra pass for a backend this slow
    # The misheard pass is not shown either: the tail stays what the pass before it heard.
    shown = "".join(w.text for w in tr.process().tentative)
    assert "ild" not in shown and shown in SENTENCE
    assert "".join(w.text for w in committed) == " He was not an ill-disposed young man,"
    committed += tr.finish().committed  # the last pass runs on the cut window
    assert "".join(w.text for w in committed) == SENTENCE
    assert backend.calls[4][0] == pytest.approx(3.58, abs=0.01)


@pytest.mark.slow
def test_a_recorded_run_that_committed_a_copied_mishearing(whisper_backend, librivox, offline_wer):
    """Replays the steps of a 2x-pace benchmark run (tests/data/librivox-2x-schedule.json). Its
    windows re-heard the committed "ill-disposed" as "ild-sposed" and the engine then committed
    "ild-sposed." for the sentence's last word (WER 5.6%); now such a pass is run again. Which
    windows mishear depends on the CPU's kernels, so only the accuracy is asserted here; the
    rehearing itself is tested on a scripted backend below."""
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


class _DetectingBackend:
    """Detects German whenever it is given no language; notes what each pass was given."""

    traits = BackendTraits()

    def __init__(self, probability: float = 0.9):
        self.probability = probability
        self.given: list[tuple[float, str | None]] = []
        self.detected_language = None

    def transcribe(self, audio, *, prompt=None, language=None):
        self.given.append((round(len(audio) / 16000, 1), language))
        self.detected_language = ("de", self.probability) if language is None else None
        return []


def test_a_detected_language_is_kept_and_confirmed_once_per_segment():
    backend = _DetectingBackend()
    tr = StreamingTranscriber(backend, StreamingConfig(vad=False))
    _feed(tr, 3.0)
    tr.finish()
    # First segment: detect until a 2 s window has (the short onset ones are the least sure).
    assert backend.given == [
        (0.9, None),
        (1.2, None),
        (1.5, None),
        (1.8, None),
        (2.4, None),
        (3.0, "de"),
    ]
    backend.given.clear()
    _feed(tr, 3.0)
    # Next segment: its onset uses the stream's language; its first 2 s window confirms it.
    assert backend.given == [
        (0.9, "de"),
        (1.2, "de"),
        (1.5, "de"),
        (1.8, "de"),
        (2.4, None),
        (3.0, "de"),
    ]
    tr.set_language("fr")
    backend.given.clear()
    _feed(tr, 0.6)
    assert [language for _, language in backend.given] == ["fr"]


def test_an_unsure_detection_is_not_kept():
    backend = _DetectingBackend(probability=0.4)
    tr = StreamingTranscriber(backend, StreamingConfig(vad=False))
    _feed(tr, 3.0)
    assert {language for _, language in backend.given} == {None}


class _Recording:
    """Wraps a backend and notes the stream time of each call."""

    def __init__(self, backend, transcriber_ref: list):
        self.backend, self.ref, self.calls_at = backend, transcriber_ref, []
        self.traits, self.detected_language = backend.traits, None

    def transcribe(self, audio, *, prompt=None, language=None):
        self.calls_at.append(self.ref[0].audio_seconds)
        return self.backend.transcribe(audio, prompt=prompt, language=language)


class _LoudIsSpeech:
    """A speech gate for scripted audio: a frame is speech when it is loud."""

    def __call__(self, frame: np.ndarray) -> float:
        return 1.0 if float(np.abs(frame).max()) > 0.05 else 0.0

    def reset(self) -> None:
        pass


@pytest.mark.parametrize("hint, passes_at", [(0.25, [0.9, 1.4]), (None, [0.9, 1.2, 1.4])])
def test_once_speech_stops_the_next_pass_is_the_closing_one(hint, passes_at):
    ref: list = []
    recording = _Recording(_ScriptedBackend([[" hello", " world"]]), ref)
    tr = StreamingTranscriber(
        recording, StreamingConfig(pause_hint_seconds=hint), speech_probability=_LoudIsSpeech()
    )
    ref.append(tr)
    audio = np.concatenate(
        [np.full(14400, 0.1, dtype=np.float32), np.zeros(16000, dtype=np.float32)]
    )
    committed = []
    for i in range(0, len(audio), CHUNK):
        tr.insert_audio(audio[i : i + CHUNK])
        committed += tr.process().committed
    # Speech ends in the frame ending at 0.928 s. At 1.2 s, 0.27 s into the silence, a regular
    # pass would hear what the closing pass hears once the 0.4 s pad is in; with the hint it
    # waits for that one.
    assert recording.calls_at == pytest.approx(passes_at)
    assert "".join(w.text for w in committed) == " hello world"  # the endpoint committed it


def test_a_pause_is_transcribed_once_and_the_endpoint_commits_that(whisper_backend):
    clip = read_clip("ss-0880")
    audio = np.concatenate([clip, np.zeros(16000 * 2, dtype=np.float32)])
    ref: list = []
    recording = _Recording(whisper_backend, ref)
    tr = StreamingTranscriber(recording, StreamingConfig(language="en"))
    ref.append(tr)
    committed = []
    for i in range(0, len(audio), 1600):
        tr.insert_audio(audio[i : i + 1600])
        committed += tr.process().committed
    text = "".join(w.text for w in committed)
    # The clip once, as the model hears it whole: not twice, nothing lost.
    offline = offline_text(whisper_backend, clip, language="en")
    assert len(words_of(text)) == len(words_of(offline)), text
    assert wer(offline, text) <= 0.15, text  # one word of 8 may differ
    speech_end, cfg = tr._last_speech_end, tr.config
    assert tr.audio_seconds > speech_end + cfg.endpoint_silence_seconds
    assert tr._speech_start is None  # the endpoint closed the segment...
    # ...without a pass of its own: the last one ran once the pad after the speech was in.
    assert (
        speech_end + cfg.speech_pad_seconds
        <= recording.calls_at[-1]
        < speech_end + cfg.speech_pad_seconds + 0.11
    )


class _BlockBackend:
    """Like the GGUF backend: encodes 2 s blocks from the window's start, updates per 2 s, and
    forces the committed prefix. Hears word ``i`` of a ramp stream (" w{i}", at 0.5 i + 0.05 to
    0.5 i + 0.45 s; every sixth ends a sentence) when the window holds all of it; after a forced
    prefix it writes only the words after the prefix's last one."""

    traits = BackendTraits(min_update_seconds=2.0, update_grid_seconds=2.0, forces_prefix=True)
    detected_language = None

    def __init__(self):
        self.calls: list[
            tuple[float, float, str | None, str | None]
        ] = []  # (start, seconds, prompt, prefix)

    @staticmethod
    def text(i: int) -> str:
        return f" w{i}" + ("." if i % 6 == 5 else "")

    def transcribe(self, audio, *, prompt=None, language=None, prefix=None):
        from desktop_rt.core_types import Word

        start, seconds = round(float(audio[0]) * 1e6) / 16000, len(audio) / 16000
        self.calls.append((start, seconds, prompt, prefix))
        after = int(prefix.split()[-1].strip("w.")) if prefix else -1
        words = []
        for i in range(after + 1, int((start + seconds) / 0.5) + 1):
            t0, t1 = 0.5 * i + 0.05, 0.5 * i + 0.45
            if t0 >= start - 0.05 and t1 <= start + seconds:
                words.append(Word(self.text(i), t0 - start, t1 - start))
        return words


def test_a_block_backend_hears_whole_blocks_and_its_forced_prefix_loses_nothing():
    backend = _BlockBackend()
    tr = StreamingTranscriber(backend, StreamingConfig(vad=False))
    audio = _ramp(31.0)
    committed = []
    for i in range(0, len(audio), 5920):  # 0.37 s chunks: never on a block boundary
        tr.insert_audio(audio[i : i + 5920])
        committed += tr.process().committed
    regular = list(backend.calls)
    committed += tr.finish().committed
    assert "".join(w.text for w in committed) == "".join(backend.text(i) for i in range(62))
    # Every regular pass heard whole 2 s blocks, from a window start on the 2 s grid, one pass
    # per 2 s of audio: trims cut on the grid too.
    assert [s + n for s, n, _, _ in regular] == [2.0 * k for k in range(1, len(regular) + 1)]
    assert all(n % 2.0 == 0 and s % 2.0 == 0 for s, n, _, _ in regular)
    assert max(n for _, n, _, _ in regular) <= 14.0 and {s for s, _, _, _ in regular} != {
        0.0
    }  # trimmed
    # The prompt and the forced prefix split the committed text between them, in order.
    for start, _, prompt, prefix in backend.calls:
        if prompt and prefix:
            last_prompt = int(prompt.split()[-1].strip("w."))
            first_prefix = int(prefix.split()[0].strip("w."))
            assert first_prefix == last_prompt + 1
        if prefix:  # a forced word ended at most a second before the window
            assert 0.5 * int(prefix.split()[0].strip("w.")) + 0.45 > start - 1.0
