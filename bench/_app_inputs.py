"""The app benchmarks' inputs: a stream by name (the eval set's 10-minute one too) and its
offline word ends, kept in the temp dir by the audio's hash (aligning 10 minutes takes minutes).
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402


def stream_named(name: str) -> C.Stream:
    """``librivox``/``long`` (bench/_common.py), or ``eval[@SECONDS]``: the evaluation set's
    10-minute stream (its first SECONDS)."""
    base, _, limit = name.partition("@")
    if base != "eval":
        return C.build_stream(name)
    sys.path.insert(0, str(C.ROOT / "bench" / "data"))
    import eval_set as E

    data = E.load("stream" + (f"@{limit}" if limit else ""))
    return C.Stream(data.name, data.audio, data.reference, [data.describe()])


def cached_reference(stream: C.Stream, align) -> list[tuple[str, float, float]]:
    """The offline word ends of ``stream`` (``align()``), kept in the temp dir by the audio's hash:
    the 10-minute stream takes minutes to align on two cores."""
    key = hashlib.sha256(stream.audio.tobytes()).hexdigest()[:16]
    path = Path(tempfile.gettempdir()) / f"desktop-rt-bench-align-{stream.name}-{key}.json"
    if path.exists():
        return [(w, float(a), float(b)) for w, a, b in json.loads(path.read_text())]
    print(f"[bench_app] x11: aligning {stream.name} ({stream.seconds:.0f} s)", file=sys.stderr)
    words = align()
    path.write_text(json.dumps(words))
    return words
