#!/usr/bin/env python3
"""How good can a turn decoded whole get, and at what cost? (issue 15, the session's WER)

    .venv/bin/python bench/bench_turn_decode.py                      # 10 dB stream, 4 settings
    .venv/bin/python bench/bench_turn_decode.py --data stream --settings fit-1 full-5

Each utterance of an eval stream (its manifest times, 0.2 s before and 0.4 s after, as a
server-VAD turn holds it) is recognised on its own, as the whole-turn decode does
(``FileTranscriber``, English, one thread), under each setting: ``fit`` is the streaming
passes' encoder context (the window plus 2 s, at least 10 s; what the decode uses), ``full``
Whisper's 30 s; ``-1`` greedy, ``-5`` beam 5; ``-prev`` prompts each turn with the text of the
turns before it (200 characters), as offline recognition conditions on earlier windows;
``-ctxN`` hears up to N seconds of the stream before the turn with it and keeps the words that
end after the turn starts (as ``decode_turn`` does with ``turn_context_seconds``),
``-fillM`` only as much of those as keeps turn and context within M seconds.
Reports WER against the references and process CPU per audio second, one line per setting, and
writes each setting's turns to ``--out``.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent / "data")]
import _common as C  # noqa: E402
import eval_set as E  # noqa: E402

from desktop_rt.engine.asr.file_transcriber import FileOptions, FileTranscriber  # noqa: E402
from desktop_rt.engine.asr.file_windows import WindowOptions  # noqa: E402
from desktop_rt.engine.asr.whisper import WhisperBackend, WhisperOptions  # noqa: E402
from desktop_rt.engine.models.embedded import ensure_default_model  # noqa: E402

BEFORE, AFTER = 0.2, 0.4  # seconds of the stream kept around an utterance


def turns(data: str) -> tuple[list, list[str], list[float]]:
    """The stream's audio cut at its utterances, their reference texts, and the seconds of the
    stream before each (its audio ends where the utterance's ends)."""
    if not data.startswith("stream"):
        raise SystemExit(f"{data!r}: only the stream's utterances have times (stream[-snrN][@S])")
    stream = E.load(data)
    times = E.read_manifest(E.default_cache())["stream"]["utterances"][: len(stream.utterances)]
    audio = [stream.audio[: int((u["end"] + AFTER) * 16000)] for u in times]
    starts = [max(0.0, u["start"] - BEFORE) for u in times]
    return audio, stream.utterances, starts


def decode_all(
    setting: str, audio: list, starts: list[float], model: Path
) -> tuple[list[str], float]:
    context, beam, *rest = setting.split("-")
    before = next((float(r[3:]) for r in rest if r.startswith("ctx")), 0.0)
    most = next((float(r[4:]) for r in rest if r.startswith("fill")), None)
    backend = WhisperBackend(model, WhisperOptions(threads=1, beam_size=int(beam)))
    options = FileOptions(windows=WindowOptions(threshold=0.5), whole_windows=context == "full")
    texts: list[str] = []
    start = time.process_time()
    for stream, begins in zip(audio, starts, strict=True):
        context = before
        if most is not None:  # only as much as keeps the window within ``most`` seconds
            context = min(before, max(0.0, most - (len(stream) / 16000 - begins)))
        first = max(0.0, begins - context)
        turn = stream[int(first * 16000) :]
        prompt = (" ".join(texts)[-200:] or None) if "prev" in rest else None
        transcriber = FileTranscriber(backend, language="en", prompt=prompt, options=options)
        words = transcriber.transcribe([turn]).words
        kept = [w for w in words if w.end > begins - first]  # as decode_turn
        texts.append("".join(w.text for w in kept).strip())
    return texts, time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="stream-snr10")
    parser.add_argument("--settings", nargs="+", default=["fit-1", "full-1", "fit-5", "full-5"])
    parser.add_argument("--out", type=Path, default=Path("/tmp/bench-turn-decode"))
    args = parser.parse_args()
    audio, refs, starts = turns(args.data)
    seconds = sum(len(a) / 16000 - s for a, s in zip(audio, starts, strict=True))
    model = ensure_default_model()
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"{args.data}: {len(audio)} turns, {seconds:.0f} s, load {C.loadavg()}")
    for setting in args.settings:
        texts, cpu = decode_all(setting, audio, starts, model)
        (args.out / f"{args.data}-{setting}.txt").write_text("\n".join(texts) + "\n")
        error = C.wer(" ".join(refs), " ".join(texts))
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"{setting}: WER {100 * error:.2f} %, CPU {cpu / seconds:.3f} s per audio s, "
            f"peak RSS so far {peak:.0f} MB"
        )


if __name__ == "__main__":
    main()
