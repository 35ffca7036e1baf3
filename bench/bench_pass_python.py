#!/usr/bin/env python3
"""The inference thread's Python time per pass, outside CTranslate2's native calls.

A Python thread holds the GIL while it runs Python code; the inference thread's share of that
is what the UI thread may wait for (docs/design/app.md, "The UI thread"). This feeds the
LibriVox stream (tests/data, 26.7 s) through a real :class:`InferenceWorker` and
:class:`StreamingTranscriber` on the real tiny model, one 0.1 s chunk per turn (as a live
stream that keeps up), and reports the worker thread's CPU time in the transcriber's calls
less its CPU time inside CTranslate2's calls (encode, generate, align, detect_language, which
release the GIL), per model pass, split into the speech gate (Silero VAD), the backend's own
Python (features, word alignment, probabilities) and the streaming engine's (agreement,
runaway checks, window, prompt). CPU time, not wall time: a loaded core inflates it little.

    .venv/bin/python bench/bench_pass_python.py --runs 3          # Python ms per pass
    .venv/bin/python bench/bench_pass_python.py --profile 25      # where it goes (cProfile)

``--profile N`` prints the N functions with most own CPU time under cProfile (which slows
pure Python several times: read the shares, not the milliseconds).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import queue
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

NATIVE = ("encode", "generate", "align", "detect_language")
CHUNK_SECONDS = 0.1


class _TimedModel:
    """Forwards to a ``ctranslate2.models.Whisper``, adding up the calling thread's CPU time
    inside its native calls."""

    def __init__(self, model) -> None:
        self._model = model
        self.native_s = 0.0

    def __getattr__(self, name: str):
        attr = getattr(self._model, name)
        if name not in NATIVE:
            return attr

        def timed(*args, **kwargs):
            t = time.thread_time()
            try:
                return attr(*args, **kwargs)
            finally:
                self.native_s += time.thread_time() - t

        return timed


class _Timed:
    """Adds up the calling thread's CPU time in one callable."""

    def __init__(self, call) -> None:
        self._call = call
        self.cpu_s = 0.0

    def __call__(self, *args, **kwargs):
        t = time.thread_time()
        try:
            return self._call(*args, **kwargs)
        finally:
            self.cpu_s += time.thread_time() - t


class _TimedBackend:
    """Forwards to a backend, adding up the CPU time of its ``transcribe``."""

    def __init__(self, backend) -> None:
        self._backend = backend
        self.transcribe = _Timed(backend.transcribe)

    def __getattr__(self, name: str):
        return getattr(self._backend, name)


class _TimedTranscriber:
    """A StreamingTranscriber whose calls add up the worker thread's CPU time."""

    def __init__(self, inner, profiler: cProfile.Profile | None) -> None:
        self._inner = inner
        self._profiler = profiler
        self.cpu_s = 0.0

    def _timed(self, call, *args):
        t = time.thread_time()
        if self._profiler is not None:
            self._profiler.enable()
        try:
            return call(*args)
        finally:
            if self._profiler is not None:
                self._profiler.disable()
            self.cpu_s += time.thread_time() - t

    def insert_audio(self, samples):
        return self._timed(self._inner.insert_audio, samples)

    def process(self):
        return self._timed(self._inner.process)

    def finish(self):
        return self._timed(self._inner.finish)

    def clear(self) -> None:
        self._inner.clear()

    @property
    def room_seconds(self) -> float:
        return self._inner.room_seconds

    @property
    def turn_to_decode(self) -> bool:
        return self._inner.turn_to_decode

    def decode_turn(self):
        return self._timed(self._inner.decode_turn)

    def set_language(self, language) -> None:
        self._inner.set_language(language)

    def set_prompt(self, prompt, respellings=()) -> None:
        self._inner.set_prompt(prompt, respellings)


def one_run(backend, audio, profiler: cProfile.Profile | None) -> dict:
    """Feed ``audio`` through a worker, one chunk per turn; the run's CPU split."""
    from desktop_rt.engine.asr.streaming import StreamingTranscriber
    from desktop_rt.engine.asr.worker import (
        ConsumedResult,
        FlushedResult,
        InferenceWorker,
        WorkerConfig,
    )
    from desktop_rt.engine.protocol.events import AudioChunk, Flush

    timed_model = backend._model.model = _TimedModel(backend._model.model)
    timed_backend = _TimedBackend(backend)
    inner = StreamingTranscriber(timed_backend)
    inner._gate.feed = gate = _Timed(inner._gate.feed)  # the speech gate's VAD
    transcriber = _TimedTranscriber(inner, profiler)
    worker = InferenceWorker(lambda: transcriber, WorkerConfig(cpu_budget=1.0))
    worker.start()
    results: queue.Queue = queue.Queue()
    stream = worker.open_stream(results.put)
    step = int(16000 * CHUNK_SECONDS)
    words = []
    try:
        for i in range(0, len(audio), step):
            stream.submit([AudioChunk("item", audio[i : i + step])])
            words += _until(results, ConsumedResult)
        stream.submit([Flush("item", final=True)])
        words += _until(results, FlushedResult)
    finally:
        worker.stop()
        backend._model.model = timed_model._model
    passes = inner.inferences + inner.turn_decodes
    python_s = transcriber.cpu_s - timed_model.native_s
    backend_s = timed_backend.transcribe.cpu_s - timed_model.native_s
    return {
        "passes": passes,
        "python_ms_per_pass": 1000 * python_s / max(passes, 1),
        "python_s": python_s,
        "gate_s": gate.cpu_s,
        "backend_s": backend_s,  # the backend's Python: features, word alignment, probabilities
        "engine_s": python_s - gate.cpu_s - backend_s,  # streaming, agreement, runaway, window
        "native_s": timed_model.native_s,
        "text": "".join(w.text for w in words),
    }


def _until(results: queue.Queue, kind) -> list:
    """Committed words of results up to the first of ``kind``."""
    words = []
    while True:
        result = results.get(timeout=300)
        words += list(getattr(result, "committed", ()))
        if isinstance(result, kind):
            return words


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--profile", type=int, default=0, help="print the top N functions")
    p.add_argument("--threads", type=int, default=1, help="CTranslate2 threads")
    p.add_argument("--profile-out", type=Path, help="--profile: also save the stats here")
    args = p.parse_args(argv)
    os.environ.setdefault(
        "DESKTOP_RT_DATA_DIR", str(Path(tempfile.gettempdir()) / "desktop-rt-bench-data")
    )
    from desktop_rt.engine.asr.whisper import WhisperBackend, WhisperOptions
    from desktop_rt.engine.models.embedded import ensure_default_model
    from tests.support.clips import LIBRIVOX, librivox_stream, reference_text, wer

    audio, _ = librivox_stream()
    reference = " ".join(reference_text(n) for n in LIBRIVOX)
    backend = WhisperBackend(ensure_default_model(), WhisperOptions(threads=args.threads))
    profiler = cProfile.Profile(time.thread_time) if args.profile else None
    print(f"load {os.getloadavg()[0]:.1f}; {len(audio) / 16000:.1f} s of audio")
    for k in range(args.runs):
        r = one_run(backend, audio, profiler)
        print(
            f"run {k + 1}: {r['passes']} passes, Python {r['python_ms_per_pass']:.2f} ms per "
            f"pass ({r['python_s']:.3f} s: gate {r['gate_s']:.3f}, backend "
            f"{r['backend_s']:.3f}, engine {r['engine_s']:.3f}), native {r['native_s']:.2f} s, "
            f"WER {wer(reference, r['text']):.3f}"
        )
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(args.profile)
        if args.profile_out:
            profiler.dump_stats(args.profile_out)
    backend.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
