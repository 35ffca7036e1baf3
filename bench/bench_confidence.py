"""How well shading words below a probability threshold flags the words the model got wrong.

    .venv/bin/python bench/bench_confidence.py            # librivox and long streams, one run

Each stream (bench/_common.py), clean and with white noise at 5 dB SNR (seeded), is recognised whole by FileTranscriber + WhisperBackend (the
embedded model); the words' probabilities are what the captions shade on. Hypothesis words are
aligned to the reference (difflib on the WER form); a word is wrong when it is not in a matching
block. For each threshold: the share of words shaded, the precision (shaded words that are
wrong) and the recall (wrong words that are shaded). No timing; one run is exact. Results:
bench/results/confidence-<date>.md/.json.
"""

from __future__ import annotations

import difflib
import json
import sys
from datetime import date
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import build_stream, machine_info, norm_tokens  # noqa: E402

THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7)


def noisy(audio: np.ndarray, snr_db: float | None) -> np.ndarray:
    if snr_db is None:
        return audio
    power = float(np.mean(audio**2)) / (10 ** (snr_db / 10))
    noise = np.random.default_rng(18).normal(0.0, np.sqrt(power), audio.shape)
    return (audio + noise).astype(np.float32)


def scored_words(stream_name: str, snr_db: float | None) -> list[tuple[str, float, bool]]:
    """(word, probability, wrong) for each recognised word of the stream."""
    from desktop_rt.engine.asr.file_transcriber import FileTranscriber
    from desktop_rt.engine.asr.whisper import WhisperBackend
    from desktop_rt.engine.models.embedded import ensure_default_model

    stream = build_stream(stream_name)
    backend = WhisperBackend(ensure_default_model())
    try:
        audio = noisy(stream.audio, snr_db)
        result = FileTranscriber(backend, language="en").transcribe([audio])
    finally:
        backend.close()
    hyp: list[tuple[str, float]] = []
    for word in result.words:
        for token in norm_tokens(word.text):
            hyp.append((token, word.probability))
    ref = norm_tokens(stream.reference)
    right = set()
    matcher = difflib.SequenceMatcher(a=[t for t, _ in hyp], b=ref, autojunk=False)
    for block in matcher.get_matching_blocks():
        right.update(range(block.a, block.a + block.size))
    return [(t, p, i not in right) for i, (t, p) in enumerate(hyp)]


def table(words: list[tuple[str, float, bool]]) -> list[dict[str, float]]:
    wrong = sum(1 for _, _, w in words if w)
    rows = []
    for threshold in THRESHOLDS:
        shaded = [w for _, p, w in words if p < threshold]
        hits = sum(1 for w in shaded if w)
        rows.append(
            {
                "threshold": threshold,
                "shaded": len(shaded) / max(1, len(words)),
                "precision": hits / len(shaded) if shaded else 0.0,
                "recall": hits / wrong if wrong else 0.0,
            }
        )
    return rows


def main() -> None:
    results = {}
    for name, snr in (("librivox", None), ("long", None), ("librivox", 5.0), ("long", 5.0)):
        words = scored_words(name, snr)
        results[name if snr is None else f"{name} +noise {snr:g} dB"] = {
            "words": len(words),
            "wrong": sum(1 for _, _, w in words if w),
            "rows": table(words),
        }
    out = Path(__file__).resolve().parent / "results" / f"confidence-{date.today()}"
    doc = {"machine": machine_info(), "results": results}
    out.with_suffix(".json").write_text(json.dumps(doc, indent=2) + "\n")
    lines = [
        "| stream | words | wrong | threshold | shaded | precision | recall |",
        "|---" * 7 + "|",
    ]
    for name, r in results.items():
        for row in r["rows"]:
            lines.append(
                f"| {name} | {r['words']} | {r['wrong']} | {row['threshold']:.1f} | "
                f"{row['shaded']:.1%} | {row['precision']:.1%} | {row['recall']:.1%} |"
            )
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
