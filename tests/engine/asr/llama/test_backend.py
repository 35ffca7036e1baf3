"""The GGUF speech backend on a tiny random-weight Qwen3-ASR pair, through real llama.cpp.

The weights are random, so the text is noise: these tests assert structure (prompt layout,
shapes, times, cache reuse against a cold run, freed memory, errors), never words.
"""

from __future__ import annotations

import ctypes
import gc
import json
from itertools import pairwise

import psutil
import pytest

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.backend import AsrBackend
from desktop_rt.engine.asr.llama.backend import LlamaAsrBackend, LlamaOptions
from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
from tests.support.clips import DATA, read_clip
from tests.support.tiny_qwen3asr import RATE, TINY, loud_start, noise, write_text_model

OPTIONS = LlamaOptions(threads=1)


def test_transcribe_gives_timed_words_within_the_window(backend):
    assert isinstance(backend, AsrBackend)
    assert backend.name == "tiny-qwen3asr-text.gguf"
    seen = 0
    for seed in range(4):
        audio = noise(3.0 + seed, seed)
        words = backend.transcribe(audio, prompt="context words")
        assert backend.stats.generated >= 1
        seen += len(words)
        for w in words:
            assert isinstance(w, Word) and w.text.startswith(" ") and w.text.strip()
            assert 0.0 <= w.start <= w.end <= len(audio) / RATE + 1e-6
            assert 0.0 < w.probability <= 1.0
        assert all(a.end <= b.start + 1e-6 for a, b in pairwise(words))
    assert seen > 0
    assert backend.transcribe(noise(0.05)) == []  # too short to hold a word


def test_same_window_same_words_with_and_without_reuse(pair, backend):
    plain = LlamaAsrBackend(*pair, LlamaOptions(threads=1, reuse_cache=False, draft=False))
    try:
        for seconds in (4.0, 5.0, 5.0, 9.0, 10.0):
            audio = loud_start(seconds)
            a = backend.transcribe(audio, language="en")
            b = plain.transcribe(audio, language="en")
            assert [(w.text, w.start, w.end) for w in a] == [(w.text, w.start, w.end) for w in b]
            assert [w.probability for w in a] == pytest.approx([w.probability for w in b], rel=0.05)
    finally:
        plain.close()
    backend.transcribe(loud_start(10.0), language="en")
    assert backend.stats.drafted > 0  # the repeated window's output was verified in one batch


def test_repeat_penalty_comes_from_the_gguf(tmp_path, pair):
    text = write_text_model(tmp_path / "pen-text.gguf", TINY, repeat_penalty=1.3)
    b = LlamaAsrBackend(text, pair[1], OPTIONS)
    try:
        assert b.repeat_penalty == (pytest.approx(1.3), 64)
        b.transcribe(noise(3.0))
    finally:
        b.close()
    plain = LlamaAsrBackend(
        text, pair[1], LlamaOptions(threads=1, repeat_penalty=1.0, repeat_last_n=8)
    )
    assert plain.repeat_penalty == (1.0, 8)
    plain.close()


def test_streams_through_local_agreement(backend):
    audio = read_clip("ss-0870")[: 12 * RATE]
    # No speech gate here (see the next test for the backend and Silero in one process).
    transcriber = StreamingTranscriber(backend, StreamingConfig(language="en", vad=False))
    committed, tentative_seen = [], False
    for i in range(0, len(audio), 1600):
        transcriber.insert_audio(audio[i : i + 1600])
        update = transcriber.process()
        committed += update.committed
        tentative_seen |= bool(update.tentative)
    committed += transcriber.finish().committed
    assert transcriber.inferences >= int(
        len(audio) / RATE / backend.traits.min_update_seconds
    )  # an update per 2 s
    assert tentative_seen or committed
    assert all(0.0 <= w.start <= w.end <= len(audio) / RATE + 1e-6 for w in committed)
    assert all(a.start <= b.start + 1e-6 for a, b in pairwise(committed))


def test_transcribe_command_runs_a_gguf_pair(pair, tmp_path, capsys):
    from desktop_rt.cli import main

    out = tmp_path / "t.json"
    rc = main(
        [
            "transcribe",
            str(DATA / "ss-0880.wav"),
            "--model",
            str(pair[0]),
            "--mmproj",
            str(pair[1]),
            "--threads",
            "1",
            "--no-live",
            "-o",
            str(out),
        ]
    )
    assert rc == 0
    assert isinstance(json.loads(out.read_text()), dict)
    rc = main(["transcribe", str(DATA / "ss-0880.wav"), "--model", str(pair[1]), "--no-live"])
    assert rc == 1
    assert "projector (mmproj), not a text model" in capsys.readouterr().err


@pytest.mark.slow
def test_close_frees_native_memory(pair):
    proc = psutil.Process()

    def cycle():
        b = LlamaAsrBackend(*pair, OPTIONS)
        b.transcribe(noise(2.0))
        b.close()
        with pytest.raises(RuntimeError):
            b.transcribe(noise(1.0))
        b.close()

    def settled_rss() -> int:
        # Freed native memory stays in glibc's arenas until trimmed; without this the reading
        # depends on what earlier tests left in the heap, not on what these cycles leak.
        gc.collect()
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        return proc.memory_info().rss

    for _ in range(5):
        cycle()
    before = settled_rss()
    for _ in range(40):
        cycle()
    grown = settled_rss() - before
    assert grown < 16 * 2**20, (
        f"RSS grew {grown / 2**20:.1f} MiB over 40 load/transcribe/close cycles"
    )


@pytest.mark.slow
def test_a_thousand_windows_do_not_grow_memory(backend):
    """A leak grows with every window: the second 500 windows may add at most 4 MiB (8 KiB a
    window), measured after trimming the allocator, so a one-off growth in the first half
    (caches, arenas) is not taken for a leak."""
    proc = psutil.Process()
    windows = [noise(0.5 + (i % 5) * 0.25, i) for i in range(20)]

    def rss_after(count: int, start: int) -> int:
        for i in range(start, start + count):
            backend.transcribe(windows[i % len(windows)], prompt=f"p{i % 7}")
        gc.collect()
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        return int(proc.memory_info().rss)

    before = rss_after(20, 0)
    middle = rss_after(500, 0)
    end = rss_after(500, 500)
    assert end - middle < 4 * 2**20, f"RSS grew {(end - middle) / 2**20:.1f} MiB over 500 windows"
    assert end - before < 16 * 2**20, f"RSS grew {(end - before) / 2**20:.1f} MiB in all"


def test_a_models_file_entry_reaches_the_llama_options(pair):
    from desktop_rt.engine.models.catalogue import ModelEntry
    from desktop_rt.engine.models.kinds import load_entry

    entry = ModelEntry(
        id="tiny-asr",
        backend="llama",
        model_path=str(pair[0]),
        mmproj=str(pair[1]),
        options=(
            ("threads", 1),
            ("token_slack", 3),
            ("update_seconds", 1.5),
            ("language", "en"),
            ("force_prefix", False),
        ),
    )
    b = load_entry(entry)
    try:
        assert b.name == "tiny-asr"
        assert (b.options.threads, b.options.token_slack, b.traits.min_update_seconds) == (
            1,
            3,
            1.5,
        )
        # Streaming then hears committed words again; 2 s blocks no longer fit in an update of 1.5 s.
        assert (b.traits.forces_prefix, b.traits.update_grid_seconds) == (False, None)
        b.transcribe(noise(2.0))
        assert b.stats.generated <= 3 + int(b.options.max_tokens_per_second * 2.0)
    finally:
        b.close()
