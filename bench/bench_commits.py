"""Repeats, drops and invented words of the streaming engine against offline, on a scripted clock.

```sh
.venv/bin/python bench/bench_commits.py --data librivox,two-cities,stream@180 --factor 0,2
CT2_FORCE_CPU_ISA=AVX2 .venv/bin/python bench/bench_commits.py ...   # another machine's kernels
taskset -c 0 .venv/bin/python bench/bench_commits.py --factor 1 ...  # one core
```

Each data set is fed to ``StreamingTranscriber`` (real Whisper backend, default settings) in
100 ms chunks on a virtual clock: with ``--factor 0`` every chunk gets its own ``process``
call (no backlog, deterministic); with ``--factor F`` each pass advances the clock by F times
the wall time it really took, and the chunks that came due meanwhile are inserted together
before the next call, as at real time on a machine F times slower (``taskset -c 0`` makes the
measured passes themselves slower). No sleeps: a 10-minute stream costs its CPU time only.

The committed text is compared with faster-whisper offline (beam 5, as shipped) on the same
audio in the same process (same ISA): ``inserted`` words not in offline's transcript,
``deleted`` words of offline's the stream lacks, ``repeats`` (three-word phrases and doubled
words written more often than offline writes them), WER against offline and the reference.
With ``--trace DIR`` every pass (window start, prompt, words) is written out, to turn a defect
into a scripted test.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "data"))

import _common as C  # noqa: E402
import eval_set as E  # noqa: E402

CHUNK = int(C.SAMPLE_RATE * C.CHUNK_SECONDS)
MAX_TURN_CHUNKS = 80  # the worker takes at most 8 s of queued audio per turn (max_turn_seconds)


def base_cost(window_seconds: float) -> float:
    """What a pass of Whisper base int8 costs on this machine's two cores when quiet
    (tests/support/slow_machine.py): a machine-independent clock for ``--cost model``."""
    return 0.18 + 0.012 * window_seconds


def hands_free() -> tuple[np.ndarray, str]:
    """tests/e2e/test_hands_free_x11.py's 72 s: the LibriVox sentences 0.9 s apart, Beckett,
    the sentences again (the prompt then holds what is said next), 1 s pauses between."""
    layout = [x for name in C.LIBRIVOX for x in (name, 0.9)]
    s = C.assemble_stream("hands-free", [1.0, *layout, 1.0, "beckett", 1.0, *layout, 1.0])
    return s.audio, s.reference


def load(name: str) -> tuple[np.ndarray, str]:
    """Audio and reference of a data set: a bench stream, ``hands-free``, a clip of tests/data
    or of the evaluation set, or an evaluation set (``stream@180``)."""
    if name == "hands-free":
        return hands_free()
    if name in C.STREAM_LAYOUTS:
        s = C.build_stream(name)
        return s.audio, s.reference
    if (C.DATA / f"{name}.wav").exists():
        return C.read_clip(name), (C.DATA / f"{name}.txt").read_text().strip()
    clip = E.default_cache() / "clips" / "clean" / f"{name}.wav"
    if clip.exists():
        manifest = E.read_manifest(E.default_cache())
        return E.read_wav(clip), manifest["clips"][name]["reference"]
    data = E.load(name)
    return data.audio, data.reference


class TracedBackend:
    """The real backend, each pass logged and its wall time added to a virtual clock."""

    def __init__(self, inner, factor: float, measured: bool):
        self.inner, self.factor, self.measured = inner, factor, measured
        self.clock = 0.0
        self.passes: list[dict] = []

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def traits(self):
        return self.inner.traits

    @property
    def detected_language(self):
        return self.inner.detected_language

    def transcribe(self, audio, **kwargs):
        t0 = time.perf_counter()
        words = list(self.inner.transcribe(audio, **kwargs))
        took = time.perf_counter() - t0 if self.measured else base_cost(len(audio) / C.SAMPLE_RATE)
        self.clock += self.factor * took
        self.passes.append(
            {
                "seconds": len(audio) / C.SAMPLE_RATE,
                "prompt": kwargs.get("prompt"),
                "words": [(w.text, w.start, w.end, w.probability) for w in words],
            }
        )
        return words

    def close(self) -> None:
        self.inner.close()


def stream_through(tr, backend: TracedBackend, audio: np.ndarray) -> tuple[list, float]:
    """Feed ``audio`` in chunks on the virtual clock; the committed words and the most audio
    that waited (seconds)."""
    n = (len(audio) + CHUNK - 1) // CHUNK
    sent, words, lag = 0, [], 0.0
    while sent < n:
        due = sent + 1
        if backend.factor:
            due = min(
                n, max(due, int(backend.clock / C.CHUNK_SECONDS + 1e-9)), sent + MAX_TURN_CHUNKS
            )
            backend.clock = max(backend.clock, due * C.CHUNK_SECONDS)
        lag = max(lag, (due - sent - 1) * C.CHUNK_SECONDS)  # audio that waited for this call
        tr.insert_audio(audio[sent * CHUNK : due * CHUNK])
        sent = due
        update = tr.process()
        words += [(w.text, w.start, w.end) for w in update.committed]
    words += [(w.text, w.start, w.end) for w in tr.finish().committed]
    return words, lag


def through_worker(make_tr, backend: TracedBackend, audio: np.ndarray) -> tuple[list, float]:
    """The same through the real ``InferenceWorker`` (its compute governor, turns of up to
    8 s, spacing) on the virtual clock of tests/support/slow_machine.py: the user's path."""
    sys.path.append(str(C.ROOT))
    from desktop_rt.engine.asr.worker import InferenceWorker, WorkerConfig
    from tests.support.slow_machine import CostedBackend, SimStream, Simulation, VirtualClock

    clock = VirtualClock()
    costed = CostedBackend(backend, clock, backend.factor, measured=backend.measured)
    if not backend.measured:
        costed.cost = base_cost
    backend.factor = 0.0  # the costed wrapper moves the clock
    worker = InferenceWorker(lambda: make_tr(costed), WorkerConfig(), clock=clock)
    worker.start(own_thread=False)
    stream = SimStream(audio)
    sim = Simulation(worker, clock, [stream])
    sim.run(limit=10 * len(audio) / C.SAMPLE_RATE + 600)
    worker.stop()
    return [(w.text, w.start, w.end) for w, _ in stream.committed], stream.max_lag()


def doubled(tokens: list[str]) -> Counter:
    """Phrases of 1-3 words written twice in a row ("better better")."""
    out: Counter = Counter()
    for n in (1, 2, 3):
        for i in range(len(tokens) - 2 * n + 1):
            if tokens[i : i + n] == tokens[i + n : i + 2 * n]:
                out[tuple(tokens[i : i + n])] += 1
    return out


def repeats(offline: list[str], hyp: list[str]) -> int:
    """Three-word phrases and doubled words the stream writes more often than offline."""
    grams = [Counter(zip(t, t[1:], t[2:], strict=False)) for t in (offline, hyp)]
    twice = [doubled(t) for t in (offline, hyp)]
    return sum(max(0, n - grams[0][g]) for g, n in grams[1].items() if grams[0][g]) + sum(
        max(0, n - twice[0][g]) for g, n in twice[1].items()
    )


def compare(offline: str, hypothesis: str, reference: str) -> dict:
    off, hyp = C.norm_tokens(offline), C.norm_tokens(hypothesis)
    counts: Counter = Counter()
    diffs = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
        None, off, hyp, autojunk=False
    ).get_opcodes():
        if tag == "equal":
            continue
        counts["inserted"] += j2 - j1
        counts["deleted"] += i2 - i1
        diffs.append(
            f"{tag} @{i1}: {' '.join(off[max(0, i1 - 3) : i2])} -> {' '.join(hyp[max(0, j1 - 3) : j2])}"
        )
    return {
        "inserted": counts["inserted"],
        "deleted": counts["deleted"],
        "repeats": repeats(off, hyp),
        "wer_vs_offline": C.wer(offline, hypothesis),
        "wer": C.wer(reference, hypothesis),
        "offline_wer": C.wer(reference, offline),
        "diffs": diffs,
    }


def offline_text(model_dir: str, audio: np.ndarray, cache: Path) -> str:
    """faster-whisper offline as shipped, cached per data set and ISA."""
    if cache.exists():
        return cache.read_text()
    from _align import alignment_words

    stream = C.Stream("x", audio, "", [])
    text = "".join(w[0] for w in alignment_words(Path(model_dir), stream, 2, None))
    cache.write_text(text)
    return text


def run(args) -> list[dict]:
    from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
    from desktop_rt.engine.asr.whisper import WhisperBackend
    from desktop_rt.engine.models.embedded import ensure_default_model

    model_dir = str(args.model or ensure_default_model())
    inner = WhisperBackend(model_dir)
    isa = os.environ.get("CT2_FORCE_CPU_ISA", "native")
    rows = []
    for name in args.data.split(","):
        audio, reference = load(name)
        cache = Path(args.cache) / f"offline-{name}-{isa}.txt"
        offline = offline_text(model_dir, audio, cache)
        for factor in (float(f) for f in args.factor.split(",")):
            backend = TracedBackend(inner, factor, args.cost == "measured")
            config = StreamingConfig(language=args.language)
            t0 = time.process_time()
            if args.worker:
                tr = None
                words, lag = through_worker(
                    lambda b, c=config: StreamingTranscriber(b, c), backend, audio
                )
            else:
                tr = StreamingTranscriber(backend, config)
                words, lag = stream_through(tr, backend, audio)
            cpu = time.process_time() - t0
            text = "".join(w[0] for w in words)
            row = {
                "data": name,
                "isa": isa,
                "factor": factor,
                "cost": args.cost,
                "label": args.label,
                "engine": str(Path(sys.modules[StreamingTranscriber.__module__].__file__ or "")),
            }
            row |= compare(offline, text, reference)
            row["worker"] = args.worker
            row |= {"passes": len(backend.passes), "max_lag": lag}
            row["rehearings"] = tr.rehearings if tr is not None else None
            row |= {"cpu_per_audio_s": cpu / (len(audio) / C.SAMPLE_RATE), "text": text}
            rows.append(row)
            print(json.dumps({k: v for k, v in row.items() if k != "text"}), flush=True)
            if args.trace:
                out = (
                    Path(args.trace)
                    / f"{args.label}-{name}-{isa}-f{factor:g}{args.cost[0]}{'w' * args.worker}.json"
                )
                out.write_text(json.dumps({"row": row, "words": words, "passes": backend.passes}))
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", default="librivox,two-cities")
    p.add_argument("--factor", default="0", help="comma list: 0 = every chunk its own call")
    p.add_argument("--label", default="run")
    p.add_argument(
        "--cost",
        choices=["model", "measured"],
        default="model",
        help="a pass's cost: base_cost of its window, or its measured wall time",
    )
    p.add_argument("--language", default=None)
    p.add_argument("--model", default=None)
    p.add_argument("--cache", default="/tmp/bench-commits")
    p.add_argument("--worker", action="store_true", help="through the InferenceWorker")
    p.add_argument("--trace", default=None, help="folder for every pass of every run")
    p.add_argument("--out", default=None, help="append rows as JSON lines here")
    args = p.parse_args(argv)
    Path(args.cache).mkdir(parents=True, exist_ok=True)
    if args.trace:
        Path(args.trace).mkdir(parents=True, exist_ok=True)
    rows = run(args)
    if args.out:
        with open(args.out, "a") as fh:
            for row in rows:
                fh.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
