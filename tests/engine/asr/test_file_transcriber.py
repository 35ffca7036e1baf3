"""Whole-file recognition: fake backends for its mechanics, the real model against
faster-whisper offline for its quality, the tiny GGUF model for its genericity."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from desktop_rt.core_types import SAMPLE_RATE, Word
from desktop_rt.engine.asr.backend import AsrBackend, BackendTraits
from desktop_rt.engine.asr.file_transcriber import FileOptions, FileTranscriber
from desktop_rt.errors import AudioDecodeError
from tests.support.clips import LIBRIVOX, librivox_stream, read_clip, reference_text, wer

RNG = np.random.default_rng(0)


class Loudness:
    """Speech wherever a frame is loud: the synthetic files are noise bursts and silence."""

    def __call__(self, frame):
        return 1.0 if float(np.sqrt(np.mean(frame**2))) > 0.05 else 0.0

    def reset(self):
        pass


class BurstBackend:
    """Hears one word per loud stretch of the window; records what it was asked."""

    name = "bursts"
    traits = BackendTraits()

    def __init__(self, detects: str | None = None, hears_until: float | None = None):
        self.calls: list[dict] = []
        self.detected_language = None
        self._detects = detects
        self._hears_until = hears_until  # window seconds after which it stops listening

    def transcribe(self, audio, *, prompt=None, language=None, prefix=None):
        seconds = len(audio) / SAMPLE_RATE
        self.calls.append({"seconds": seconds, "prompt": prompt, "language": language})
        self.detected_language = (self._detects, 0.9) if self._detects and not language else None
        step = 128  # 8 ms
        loud = np.abs(audio[: len(audio) // step * step].reshape(-1, step)).max(axis=1) > 0.05
        words, start = [], None
        for i, on in enumerate([*loud, False]):
            at = i * step / SAMPLE_RATE
            if on and start is None:
                start = at
            elif not on and start is not None:
                if self._hears_until is None or at <= self._hears_until:
                    words.append(Word(f" w{len(words)}", start, at))
                start = None
        return words

    def close(self):
        pass


def bursts(layout: list[tuple[str, float]]) -> tuple[np.ndarray, list[float]]:
    """Audio of ("burst"|"pause", seconds) parts, and the file time each burst starts."""
    parts, starts, at = [], [], 0.0
    for kind, seconds in layout:
        n = int(seconds * SAMPLE_RATE)
        if kind == "burst":
            starts.append(at)
            parts.append((0.3 * RNG.standard_normal(n)).astype(np.float32))
        else:
            parts.append(np.zeros(n, np.float32))
        at += n / SAMPLE_RATE
    return np.concatenate(parts), starts


def in_chunks(audio: np.ndarray, seconds: float = 1.0):
    step = int(seconds * SAMPLE_RATE)
    for start in range(0, len(audio), step):
        yield audio[start : start + step]


def test_words_come_back_in_file_time_across_long_pauses():
    audio, starts = bursts(
        [("pause", 3), ("burst", 1), ("pause", 0.5), ("burst", 1), ("pause", 20), ("burst", 2)]
    )
    backend = BurstBackend()
    result = FileTranscriber(backend, scorer=Loudness).transcribe(in_chunks(audio))
    assert [round(w.start, 1) for w in result.words] == [round(s, 1) for s in starts]
    assert result.windows == 1 and backend.calls[0]["seconds"] < 6  # the 20 s pause shrank
    assert result.seconds == pytest.approx(len(audio) / SAMPLE_RATE)


def test_each_window_is_prompted_with_the_text_before_it_and_keeps_the_language():
    audio, _ = bursts([("burst", 2), ("pause", 0.3)] * 24)  # 55 s: two windows at least
    backend = BurstBackend(detects="de")
    result = FileTranscriber(backend, prompt="Names: Dashwood.", scorer=Loudness).transcribe(
        in_chunks(audio)
    )
    first, second = backend.calls[0], backend.calls[1]
    assert first["prompt"] == "Names: Dashwood." and first["language"] is None
    assert second["language"] == "de" and result.language == "de"
    assert second["prompt"].startswith("Names: Dashwood. w0 w1")
    assert all(c["seconds"] <= 28.0 for c in backend.calls)
    assert len(result.words) == 24


def test_speech_after_the_last_word_is_heard_again():
    audio, starts = bursts([("burst", 1), ("pause", 0.3)] * 12)
    backend = BurstBackend(hears_until=8.0)
    result = FileTranscriber(backend, scorer=Loudness).transcribe(in_chunks(audio))
    first, rest = backend.calls  # the window, then the rest from its last word's end on
    assert first["seconds"] - 8.0 < rest["seconds"] < first["seconds"] - 7.0
    assert [round(w.start, 1) for w in result.words] == [round(s, 1) for s in starts]


def test_a_words_ending_heard_again_in_the_rest_is_not_written_twice():
    class EndsEarly(BurstBackend):
        """Writes the last burst "mailbox." ending 0.3 s into it; the rest hears "Box."."""

        def transcribe(self, audio, **kwargs):
            heard = super().transcribe(audio, **kwargs)
            if len(self.calls) > 1:
                return [Word(" Box.", 0.0, 0.3)]
            return [*heard[:-1], Word(" mailbox.", heard[-1].start, heard[-1].start + 0.3)]

    audio, starts = bursts([("burst", 1.5), ("pause", 0.3)] * 3)
    backend = EndsEarly()
    result = FileTranscriber(backend, scorer=Loudness).transcribe(in_chunks(audio))
    assert len(backend.calls) == 2  # the rest was heard again
    assert [w.text for w in result.words] == [" w0", " w1", " mailbox."]


def test_words_without_real_times_are_not_heard_twice():
    class Untimed(BurstBackend):
        def transcribe(self, audio, **kwargs):
            heard = super().transcribe(audio, **kwargs)  # all "within" the first 0.72 s
            return [Word(f" {chr(97 + i)}x", 0.06 * i, 0.06 * (i + 1)) for i in range(len(heard))]

    audio, starts = bursts([("burst", 1), ("pause", 0.3)] * 12)
    backend = Untimed()
    result = FileTranscriber(backend, scorer=Loudness).transcribe(in_chunks(audio))
    assert len(backend.calls) == 1 and len(result.words) == len(starts)


def test_progress_runs_to_the_end_and_carries_every_word():
    audio, _ = bursts([("burst", 2), ("pause", 5)] * 10)
    seen = []
    result = FileTranscriber(BurstBackend(), scorer=Loudness).transcribe(
        in_chunks(audio), total_seconds=70.0, progress=seen.append
    )
    done = [p.done_seconds for p in seen]
    assert done == sorted(done) and done[-1] == pytest.approx(70.0)
    assert seen[-1].fraction == 1.0
    assert [w for p in seen for w in p.words] == list(result.words)


def test_a_decoding_error_reaches_the_caller_and_stops_the_planner():
    audio, _ = bursts([("burst", 2), ("pause", 1)] * 5)

    def broken():
        yield from in_chunks(audio[: 5 * SAMPLE_RATE])
        raise AudioDecodeError("could not read audio from x: broken")

    with pytest.raises(AudioDecodeError, match="broken"):
        FileTranscriber(BurstBackend(), scorer=Loudness).transcribe(broken())
    assert not [t for t in threading.enumerate() if t.name == "file-planner"]


def test_a_backend_error_stops_the_planner():
    class Failing(BurstBackend):
        def transcribe(self, audio, **kwargs):
            raise RuntimeError("model gone")

    audio, _ = bursts([("burst", 2), ("pause", 0.3)] * 60)
    with pytest.raises(RuntimeError, match="model gone"):
        FileTranscriber(Failing(), scorer=Loudness).transcribe(in_chunks(audio))
    assert not [t for t in threading.enumerate() if t.name == "file-planner"]


def test_a_looping_window_does_not_prompt_the_next():
    class Looping(BurstBackend):
        def transcribe(self, audio, **kwargs):
            words = super().transcribe(audio, **kwargs)
            if len(self.calls) == 1:
                return [Word(" again", 0.1 * i, 0.1 * i + 0.05) for i in range(40)]
            return words

    audio, _ = bursts([("burst", 2), ("pause", 0.3)] * 24)
    backend = Looping()
    result = FileTranscriber(backend, scorer=Loudness).transcribe(in_chunks(audio))
    assert sum(w.text == " again" for w in result.words) == 4
    assert backend.calls[1]["prompt"] is None


def test_every_window_is_heard_whole_where_the_traits_ask_for_it():
    class Whole(BurstBackend):
        traits = BackendTraits(whole_context=True)

        def transcribe(self, audio, *, whole=False, **kwargs):
            words = super().transcribe(audio, **kwargs)
            self.calls[-1]["whole"] = whole
            return words

    audio, _ = bursts([("burst", 2), ("pause", 0.3)] * 24)  # two windows at least
    backend = Whole()
    FileTranscriber(backend, scorer=Loudness).transcribe(in_chunks(audio))
    assert len(backend.calls) >= 2 and all(c["whole"] for c in backend.calls)
    backend = Whole()  # the whole-turn decode's choice: streaming's context
    options = FileOptions(whole_windows=False)
    FileTranscriber(backend, options=options, scorer=Loudness).transcribe(in_chunks(audio))
    assert backend.calls and not any(c["whole"] for c in backend.calls)


# -- the real model ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def offline(default_model_dir):
    """faster-whisper's own whole-file transcription, as shipped, word timestamps on."""
    from faster_whisper import WhisperModel

    model = WhisperModel(
        str(default_model_dir), device="cpu", compute_type="int8", local_files_only=True
    )

    def transcribe(audio: np.ndarray) -> str:
        segments, _ = model.transcribe(audio, word_timestamps=True)
        return "".join(s.text for s in segments)

    return transcribe


def ours(backend: AsrBackend, audio: np.ndarray) -> str:
    return FileTranscriber(backend).transcribe(in_chunks(audio)).text


def test_wer_equals_faster_whisper_offline_on_the_librivox_stream(whisper_backend, offline):
    audio, reference = librivox_stream()
    assert wer(reference, ours(whisper_backend, audio)) <= wer(reference, offline(audio)) + 0.01


def test_wer_equals_faster_whisper_offline_on_each_clip(whisper_backend, offline):
    names = [*LIBRIVOX, "beckett"]
    reference = " ".join(reference_text(n) for n in names)
    mine = " ".join(ours(whisper_backend, read_clip(n)) for n in names)
    theirs = " ".join(offline(read_clip(n)) for n in names)
    assert wer(reference, mine) <= wer(reference, theirs) + 0.01


def test_real_speech_after_long_silences_keeps_its_file_times(whisper_backend):
    gap = np.zeros(20 * SAMPLE_RATE, np.float32)
    beckett, dashwood = read_clip("beckett"), read_clip("ss-0880")
    audio = np.concatenate([gap[: 3 * SAMPLE_RATE], beckett, gap, dashwood, gap[:SAMPLE_RATE]])
    result = FileTranscriber(whisper_backend).transcribe(in_chunks(audio))
    second = 3 + len(beckett) / SAMPLE_RATE + 20
    assert wer(reference_text("beckett") + " " + reference_text("ss-0880"), result.text) < 0.15
    assert 2.6 <= result.words[0].start < 3.6  # the speech starts at 3 s, its pad at 2.6 s
    late = [w for w in result.words if w.start > second - 0.5]
    assert " ".join(w.text.strip() for w in late).lower().startswith("he was not")
    assert all(w.end <= len(audio) / SAMPLE_RATE for w in result.words)


@pytest.mark.slow
@pytest.mark.timeout(1500)  # GENERIC kernels are several times slower than the CPU's own
def test_files_read_as_faster_whisper_offline_on_generic_int8_kernels(default_model_dir):
    """On a CPU without AVX2 (CTranslate2's GENERIC kernels), windows heard with less than
    Whisper's full 30 s wrote "ill-sposed" where offline writes "ill-disposed"."""
    names = ["ss-0870", "ss-0880", "beckett"]
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.isa_parity", str(default_model_dir), *names],
        env={**os.environ, "CT2_FORCE_CPU_ISA": "GENERIC"},
        cwd=Path(__file__).resolve().parents[3],
        capture_output=True,
        text=True,
        timeout=1400,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    texts = json.loads(done.stdout.strip().splitlines()[-1])
    reference = " ".join(reference_text(n) for n in names)
    mine, theirs = " ".join(texts["ours"]), " ".join(texts["offline"])
    assert wer(reference, mine) <= wer(reference, theirs) + 0.01, (mine, theirs)


@pytest.mark.slow
def test_a_gguf_backend_transcribes_files_too(tmp_path_factory):
    """Generic over backends: the tiny random-weight GGUF model (its text is noise)."""
    from desktop_rt.engine.asr.llama.backend import LlamaAsrBackend, LlamaOptions
    from tests.support.tiny_qwen3asr import write_pair

    pair = write_pair(tmp_path_factory.mktemp("tiny-qwen3asr"))
    backend = LlamaAsrBackend(*pair, LlamaOptions(threads=1))
    try:
        audio, _ = librivox_stream()
        audio = np.concatenate([audio, audio])  # 53 s: two windows
        result = FileTranscriber(backend, language="en").transcribe(in_chunks(audio))
    finally:
        backend.close()
    assert result.windows == 2
    starts = [w.start for w in result.words]
    assert starts == sorted(starts) and all(0 <= s <= len(audio) / SAMPLE_RATE for s in starts)
