"""bench/data/eval_set.py's reading: a data set comes back as the audio a benchmark streams,
float32, held once (``stream@S`` reads only those samples), and files it cannot use are refused.

The set is written to a temp folder as fetch_eval.py lays it out, from generated audio.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

BENCH_DATA = Path(__file__).resolve().parents[3] / "bench" / "data"
sys.path.insert(0, str(BENCH_DATA))
import eval_set as E  # noqa: E402

RATE = E.SAMPLE_RATE
NAMES = ["a-first", "b-second", "c-third"]


def owned_bytes(audio: np.ndarray) -> int:
    """The bytes of the buffer ``audio`` keeps alive (its base's, when it is a view)."""
    return (audio if audio.base is None else audio.base).nbytes


def clip(seconds: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (0.3 * rng.standard_normal(int(seconds * RATE))).astype(np.float32)


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    clips = {name: clip(1.0 + i, i) for i, name in enumerate(NAMES)}
    for name, audio in clips.items():
        E.write_wav(tmp_path / "clips" / "clean" / f"{name}.wav", audio)
    audio, spans = E.assemble([0.5, NAMES[0], 2.0, NAMES[1], 1.5, NAMES[2], 1.0], clips)
    E.write_wav(tmp_path / "stream" / "clean.wav", audio)
    manifest = {
        "clips": {
            n: {"reference": f"words of {n}", "seconds": len(a) / RATE} for n, a in clips.items()
        },
        "stream": {"utterances": [{"name": n, "start": s, "end": e} for n, s, e in spans]},
    }
    (tmp_path / E.MANIFEST).write_text(json.dumps(manifest))
    return tmp_path


def test_the_head_of_the_stream_is_read_alone_as_float32(cache):
    whole = E.load("stream", cache)
    head = E.load("stream@4", cache)  # the first clip ends at 1.5 s, the second at 5.5 s
    assert head.utterances == ["words of a-first"]
    assert head.audio.dtype == np.float32 and len(head.audio) == 2 * RATE  # its end + 0.5 s
    assert np.array_equal(head.audio, whole.audio[: 2 * RATE])
    assert owned_bytes(head.audio) == head.audio.nbytes  # not a view of the whole file
    assert owned_bytes(whole.audio) == whole.audio.nbytes
    assert whole.reference == " ".join(f"words of {n}" for n in NAMES)


def test_clips_are_read_into_one_array_with_their_gaps(cache):
    data = E.load("clips", cache)
    gap = np.zeros(int(E.CLIP_GAP * RATE), dtype=np.float32)
    parts = [E.read_wav(cache / "clips" / "clean" / f"{n}.wav") for n in NAMES]
    expected = np.concatenate([x for part in parts for x in (part, gap)])
    assert data.audio.dtype == np.float32 and np.array_equal(data.audio, expected)
    assert owned_bytes(data.audio) == data.audio.nbytes
    assert E.load("clips@4", cache).utterances == ["words of a-first", "words of b-second"]


def test_a_stereo_file_is_averaged_to_mono_float32(tmp_path):
    left, right = clip(0.5, 1), clip(0.5, 2)
    sf.write(str(tmp_path / "st.wav"), np.stack([left, right], axis=1), RATE, subtype="FLOAT")
    audio = E.read_wav(tmp_path / "st.wav")
    assert audio.dtype == np.float32 and audio.shape == left.shape
    assert np.allclose(audio, (left + right) / 2, atol=1e-6)
    assert np.array_equal(E.read_wav(tmp_path / "st.wav", 100), audio[:100])


def test_a_file_at_another_rate_is_refused_with_its_path(tmp_path):
    path = tmp_path / "fast.wav"
    sf.write(str(path), clip(0.2, 3), 44_100)
    with pytest.raises(ValueError, match=r"fast\.wav is 44100 Hz"):
        E.read_wav(path)
