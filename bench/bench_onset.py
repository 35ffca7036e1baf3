#!/usr/bin/env python3
"""How fast a segment's first words commit, and at what cost in accuracy, per engine setting.

The onset of a segment is where StreamingTranscriber's settings matter most (see
docs/design/streaming.md, "Segment onsets"). This replays six streams built from the eval clips in
shuffled orders with random pauses (0-2 s, seeded, so every setting sees the same streams)
through StreamingTranscriber as fast as it goes, and reports per setting:

  * WER over all six streams (words weighted);
  * onset latency: for each clip in each stream, the first committed word that starts within
    its first 0.8 s, measured as stream audio at the time of commit minus the word's end (the
    algorithmic part of latency; processing time adds about 0.25 s on this machine);
  * CPU seconds per audio second.

    .venv/bin/python bench/bench_onset.py '{}' '{"onset_min_probability": 0.3}'

Each argument is a JSON object of StreamingConfig overrides; '{}' is the defaults.
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _common import assemble_stream, read_clip, wer  # noqa: E402

CLIPS = ["ss-0870", "ss-0880", "ss-0890", "ss-0920", "ss-0930", "beckett"]
PAUSES = [0.0, 0.3, 0.5, 1.0, 2.0]
STREAMS = 6


def shuffled_streams(seed: int = 7):
    """(stream, [(clip start s, clip)]) for each stream; odd ones start with a pause."""
    rng = random.Random(seed)
    for k in range(STREAMS):
        order = CLIPS[:]
        rng.shuffle(order)
        layout: list = []
        for c in order:
            layout += [rng.choice(PAUSES) if layout or k % 2 else 0.0, c]
        layout.append(0.5)
        starts, t = [], 0.0
        for item in layout:
            if isinstance(item, float):
                t += item
            else:
                starts.append((t, item))
                t += len(read_clip(item)) / 16000
        yield assemble_stream(f"shuffled-{k}", layout), starts


def run(backend, overrides: dict) -> dict:
    from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber

    config = StreamingConfig(**overrides)  # language detected, as the app does by default
    errors = words = 0.0
    onsets: list[float] = []
    cpu = audio_s = 0.0
    for stream, starts in shuffled_streams():
        audio, reference = stream.audio, stream.reference
        tr = StreamingTranscriber(backend, config)
        committed = []
        t0 = time.process_time()
        for i in range(0, len(audio), 1600):
            tr.insert_audio(audio[i : i + 1600])
            committed += [(w, tr.audio_seconds) for w in tr.process().committed]
        committed += [(w, tr.audio_seconds) for w in tr.finish().committed]
        cpu += time.process_time() - t0
        audio_s += len(audio) / 16000
        n = len(reference.split())
        errors += wer(reference, "".join(w.text for w, _ in committed)) * n
        words += n
        for start, _clip in starts:
            first = [(w, at) for w, at in committed if start - 0.2 <= w.start <= start + 0.8]
            if first:
                onsets.append(first[0][1] - first[0][0].end)
    return {
        "wer_pct": round(100 * errors / words, 2),
        "onset_latency_median_s": round(float(np.median(onsets)), 2),
        "onset_latency_max_s": round(float(np.max(onsets)), 2),
        "onsets": len(onsets),
        "cpu_s_per_audio_s": round(cpu / audio_s, 3),
    }


def main() -> int:
    from desktop_rt.engine.asr.whisper import WhisperBackend
    from desktop_rt.engine.models.embedded import ensure_default_model

    settings = sys.argv[1:] or ["{}"]
    backend = WhisperBackend(ensure_default_model())
    for text in settings:
        print(
            json.dumps({"overrides": json.loads(text), **run(backend, json.loads(text))}),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
