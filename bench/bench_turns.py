"""Turns decoded whole when they end: what it costs and what it gains (docs/design/streaming.md).

    .venv/bin/python bench/bench_turns.py             # the six eval clips, decode on and off
    .venv/bin/python bench/bench_turns.py --clips 3   # a shorter run

Each clip is one push-to-talk turn (0.3 s held before and after the speech) sent to the real
``InferenceWorker`` (default ``WorkerConfig``, Whisper base int8, default ``StreamingConfig``)
at real-time pace in 0.1 s chunks, then released (a ``Flush``), as the window's session sends
it: once with ``turn_decode`` on and once off, interleaved clip by clip. Reported per clip and
over all clips:

- WER against the reference of the ``completed`` transcript (the whole decode when on), of the
  committed words (the deltas, what dictation types), and of offline recognition of the same
  audio (the clip and its held silence): ``FileTranscriber`` on the same backend (beam 1, what
  "offline" means in bench_dictation.py), the same on a beam-5 backend, and faster-whisper as
  shipped (beam 5);
- release -> the turn's last committed words, and release -> ``completed``;
- the extra CPU of a turn: process CPU seconds (every thread, CTranslate2's included) spent in
  ``decode_turn``, beside the CPU of streaming the turn, and the CPU of a beam-5 whole decode.

Results: bench/results/turns-<date>.md (+ .json), also printed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import queue
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

ROOT = C.ROOT
sys.path.insert(0, str(ROOT))
CLIPS = ["beckett", "ss-0870", "ss-0880", "ss-0890", "ss-0920", "ss-0930"]
HOLD_SECONDS = 0.3  # held before and after the speech, as bench_dictation.py holds the key


def log(*args) -> None:
    print("[bench_turns]", *args, file=sys.stderr, flush=True)


class TimedTranscriber:
    """A ``StreamingTranscriber`` whose ``decode_turn`` is timed (process CPU and wall)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.decode_cpu = 0.0
        self.decode_wall = 0.0

    def insert_audio(self, samples) -> None:
        self.inner.insert_audio(samples)

    def process(self):
        return self.inner.process()

    def finish(self):
        return self.inner.finish()

    def clear(self) -> None:
        self.inner.clear()

    def set_language(self, language) -> None:
        self.inner.set_language(language)

    def set_prompt(self, prompt, respellings=()) -> None:
        self.inner.set_prompt(prompt, respellings)

    @property
    def room_seconds(self) -> float:
        return self.inner.room_seconds

    @property
    def turn_to_decode(self) -> bool:
        return self.inner.turn_to_decode

    def decode_turn(self):
        cpu, wall = time.process_time(), time.monotonic()
        words = self.inner.decode_turn()
        self.decode_cpu += time.process_time() - cpu
        self.decode_wall += time.monotonic() - wall
        return words


def one_turn(worker, backend, clip: np.ndarray, decode: bool) -> dict:
    """One push-to-talk turn of ``clip`` at real-time pace; what came back and when."""
    from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
    from desktop_rt.engine.asr.worker import FlushedResult, WordsResult
    from desktop_rt.engine.protocol.events import AudioChunk, Flush

    config = StreamingConfig(turn_decode=decode)
    transcriber = TimedTranscriber(StreamingTranscriber(backend, config))
    results: queue.Queue = queue.Queue()
    stream = worker.open_stream(lambda r: results.put((time.monotonic(), r)), transcriber)
    audio = held(clip)
    step = int(C.SAMPLE_RATE * C.CHUNK_SECONDS)
    cpu0, t0 = time.process_time(), time.monotonic()
    for i in range(0, len(audio), step):
        due = t0 + (i + step) / C.SAMPLE_RATE  # a chunk is sent once its audio has arrived
        time.sleep(max(0.0, due - time.monotonic()))
        stream.submit([AudioChunk("item", audio[i : i + step])])
    release = time.monotonic()
    stream.submit([Flush("item", final=False)])
    committed, last_words, final, completed_at = "", release, None, None
    while completed_at is None:
        at, result = results.get(timeout=120)
        if isinstance(result, WordsResult | FlushedResult) and result.committed:
            committed += "".join(w.text for w in result.committed)
            last_words = max(last_words, at)
        if isinstance(result, FlushedResult):
            completed_at = at
            final = result.final
    cpu = time.process_time() - cpu0
    stream.close()
    whole = "".join(w.text for w in final) if final is not None else None
    return {
        "committed": committed.strip(),
        "completed": (whole if whole and whole.strip() else committed).strip(),
        "decoded": final is not None,
        "release_to_last_words_s": round(last_words - release, 3),
        "release_to_completed_s": round(completed_at - release, 3),
        "turn_cpu_s": round(cpu, 3),
        "decode_cpu_s": round(transcriber.decode_cpu, 3),
        "decode_wall_s": round(transcriber.decode_wall, 3),
    }


def held(clip: np.ndarray) -> np.ndarray:
    """The clip as a push-to-talk turn holds it: with ``HOLD_SECONDS`` of silence around it."""
    hold = np.zeros(int(C.SAMPLE_RATE * HOLD_SECONDS), dtype=np.float32)
    return np.concatenate([hold, clip, hold])


def offline(model_dir: Path, clips: list[np.ndarray]) -> dict:
    """Offline texts of each clip as its turn holds it, and the CPU each way took."""
    from faster_whisper import WhisperModel

    from desktop_rt.engine.asr.file_transcriber import FileTranscriber
    from desktop_rt.engine.asr.whisper import WhisperBackend, WhisperOptions

    out: dict[str, list] = {"file_b1": [], "file_b5": [], "fw_b5": [], "cpu_b1": [], "cpu_b5": []}
    beam5 = WhisperBackend(model_dir, WhisperOptions(beam_size=5))
    beam1 = WhisperBackend(model_dir)
    fw = WhisperModel(str(model_dir), device="cpu", compute_type="int8", local_files_only=True)
    for clip in map(held, clips):
        for key, backend in (("b1", beam1), ("b5", beam5)):
            cpu = time.process_time()
            out[f"file_{key}"].append(FileTranscriber(backend).transcribe([clip]).text)
            out[f"cpu_{key}"].append(round(time.process_time() - cpu, 3))
        segments, _ = fw.transcribe(clip, beam_size=5, vad_filter=False)
        out["fw_b5"].append(" ".join(s.text.strip() for s in segments))
    beam1.close()
    beam5.close()
    return out


def run(names: list[str]) -> dict:
    from desktop_rt.engine.asr.streaming import StreamingTranscriber
    from desktop_rt.engine.asr.whisper import WhisperBackend
    from desktop_rt.engine.asr.worker import InferenceWorker
    from desktop_rt.engine.models.embedded import ensure_default_model

    model_dir = ensure_default_model()
    clips = [C.read_clip(n) for n in names]
    references = [(C.DATA / f"{n}.txt").read_text().strip() for n in names]
    backend = WhisperBackend(model_dir)
    worker = InferenceWorker(lambda: StreamingTranscriber(backend))
    worker.start()
    one_turn(worker, backend, clips[0][: C.SAMPLE_RATE * 2], True)  # warm up
    busy0, cpu0, wall0 = C.system_busy_seconds(), time.process_time(), time.monotonic()
    turns: dict[str, list[dict]] = {"on": [], "off": []}
    for name, clip in zip(names, clips, strict=True):
        for setting in ("on", "off"):
            turns[setting].append(one_turn(worker, backend, clip, setting == "on"))
            log(name, setting, turns[setting][-1])
    wall = time.monotonic() - wall0
    other = C.other_load(busy0, C.system_busy_seconds(), time.process_time() - cpu0, wall)
    worker.stop()
    backend.close()
    texts = offline(model_dir, clips)
    return summarise(names, references, turns, texts, other)


def summarise(names, references, turns, texts, other) -> dict:
    joined = " ".join(references)

    def score(texts: list[str]) -> float:
        return round(C.wer(joined, " ".join(texts)), 4)

    on, off = turns["on"], turns["off"]
    return {
        "clips": names,
        "turns": turns,
        "offline": texts,
        "wer": {
            "completed_on": score([t["completed"] for t in on]),
            "committed_on": score([t["committed"] for t in on]),
            "completed_off": score([t["completed"] for t in off]),
            "offline_file_beam1": score(texts["file_b1"]),
            "offline_file_beam5": score(texts["file_b5"]),
            "faster_whisper_beam5": score(texts["fw_b5"]),
        },
        "per_clip_wer": {
            key: [round(C.wer(r, t), 4) for r, t in zip(references, values, strict=True)]
            for key, values in (
                ("completed_on", [t["completed"] for t in on]),
                ("committed_on", [t["committed"] for t in on]),
                ("offline_file_beam1", texts["file_b1"]),
            )
        },
        "other_load_cores": None if other is None else round(other, 2),
        "loadavg": C.loadavg(),
        "machine": C.machine_info(),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }


def _median(turns: list[dict], key: str) -> float:
    return statistics.median(t[key] for t in turns)


def render(result: dict) -> str:
    m, w = result["machine"], result["wer"]
    on, off = result["turns"]["on"], result["turns"]["off"]
    rows = []
    for i, name in enumerate(result["clips"]):
        a, b = on[i], off[i]
        rows.append(
            f"| {name} | {a['decode_cpu_s']:.2f} | {a['turn_cpu_s']:.2f} / {b['turn_cpu_s']:.2f} "
            f"| {a['release_to_last_words_s']:.2f} / {b['release_to_last_words_s']:.2f} "
            f"| {a['release_to_completed_s']:.2f} / {b['release_to_completed_s']:.2f} "
            f"| {result['offline']['cpu_b1'][i]:.2f} / {result['offline']['cpu_b5'][i]:.2f} "
            f"| {result['per_clip_wer']['completed_on'][i]:.3f} "
            f"| {result['per_clip_wer']['committed_on'][i]:.3f} "
            f"| {result['per_clip_wer']['offline_file_beam1'][i]:.3f} |"
        )
    lines = [
        f"# Turns decoded whole ({result['date']})",
        "",
        f"Machine: {m['cpu_model']}, {m['usable_cores']} usable cores, other processes used "
        f"{result['other_load_cores']} cores meanwhile, load average {result['loadavg']}.",
        "",
        "| clip | decode CPU s | turn CPU s on / off | release -> last deltas s on / off "
        "| release -> completed s on / off | whole decode CPU s beam 1 / 5 "
        "| WER completed | WER committed | WER offline |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"Medians: decode CPU {_median(on, 'decode_cpu_s'):.2f} s per turn "
        f"(turn CPU {_median(on, 'turn_cpu_s'):.2f} s on, {_median(off, 'turn_cpu_s'):.2f} s "
        f"off); release -> completed {_median(on, 'release_to_completed_s'):.2f} s on, "
        f"{_median(off, 'release_to_completed_s'):.2f} s off; release -> last deltas "
        f"{_median(on, 'release_to_last_words_s'):.2f} s on, "
        f"{_median(off, 'release_to_last_words_s'):.2f} s off.",
        f"WER over all clips: completed {w['completed_on']:.3f} (decode on), committed "
        f"{w['committed_on']:.3f}, completed with the decode off {w['completed_off']:.3f}; "
        f"offline: FileTranscriber beam 1 {w['offline_file_beam1']:.3f}, beam 5 "
        f"{w['offline_file_beam5']:.3f}, faster-whisper as shipped (beam 5) "
        f"{w['faster_whisper_beam5']:.3f}.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clips", type=int, default=len(CLIPS), help="how many eval clips")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    result = run(CLIPS[: max(1, args.clips)])
    report = render(result)
    print(report)
    args.out.mkdir(parents=True, exist_ok=True)
    stem = args.out / f"turns-{dt.date.today().isoformat()}"
    stem.with_suffix(".md").write_text(report)
    stem.with_suffix(".json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
