"""Word timing shared by the benchmarks: offline word end times and matching emitted words to them.

Every word latency in bench/ is "when a word was shown" minus "when its speech ended"; the end
times come from faster-whisper offline on the same audio (beam 5, as shipped), and emitted words
are matched to them by normalised text.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import _common as C
import numpy as np

OFFLINE_BEAM = 5  # faster-whisper's own default: the offline floor is faster-whisper as shipped


def offline_words(model, audio: np.ndarray, language: str | None) -> list[tuple[str, float, float]]:
    segments, _ = model.transcribe(
        audio, language=language, beam_size=OFFLINE_BEAM, word_timestamps=True, vad_filter=False
    )
    return [
        (w.word, float(w.start), float(w.end))
        for s in segments
        for w in (s.words or ())
        if w.word.strip()
    ]


def alignment_words(model_dir: Path, stream: C.Stream, threads: int, language: str | None):
    """Offline word timestamps of the stream: what every word latency is measured against."""
    from faster_whisper import WhisperModel

    model = WhisperModel(
        str(model_dir),
        device="cpu",
        compute_type="int8",
        cpu_threads=threads,
        num_workers=1,
        local_files_only=True,
    )
    return offline_words(model, stream.audio, language)


def token_index(words: list[tuple[str, ...]] | list[dict]) -> tuple[list[str], list[int]]:
    """Normalised tokens of a word list, and for each token the index of its word."""
    tokens, owner = [], []
    for i, w in enumerate(words):
        text = w["text"] if isinstance(w, dict) else w[0]
        for tok in C.norm_tokens(text):
            tokens.append(tok)
            owner.append(i)
    return tokens, owner


def align_ends(
    emitted: list[dict], reference: list[tuple[str, float, float]]
) -> list[float | None]:
    """For each emitted word, the offline end time of the word it matches (None: unmatched).

    Tokens are matched with difflib.SequenceMatcher on normalised text; a word whose tokens
    match takes the end of the reference word of its last matched token. Words that normalise
    to nothing (lone punctuation) are None too but are not counted as words by the caller.
    """
    e_tok, e_owner = token_index(emitted)
    r_tok, r_owner = token_index(reference)
    ends: list[float | None] = [None] * len(emitted)
    sm = difflib.SequenceMatcher(None, e_tok, r_tok, autojunk=False)
    for a, b, size in sm.get_matching_blocks():
        for k in range(size):
            ends[e_owner[a + k]] = reference[r_owner[b + k]][2]
    return ends


def percentile(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None
