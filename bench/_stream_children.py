"""bench_streaming.py's children: one system, one stream, one run, in a process of its own.

:func:`run_child` builds the stream (through ``_common.build_stream``, which bench_conditions.py
replaces), runs the system ``--one`` names and prints one JSON object on stdout's last line
(``--json``) or the text and the numbers. :func:`run_replay` feeds desktop-rt the chunk schedule
a saved run recorded, without the clock. Imported by the peer's venv too: desktop_rt and
faster_whisper are imported inside the children that use them.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import _common as C
from _align import OFFLINE_BEAM, offline_words
from _session_child import SESSION, child_desktop_rt_session
from _stream_peer import child_peer
from _stream_systems import OFFLINE, OURS, PEER_VARIANTS, paced_dict


def words_tuple(words) -> list[tuple[str, float, float]]:
    return [(w.text, w.start, w.end) for w in words]


def child_desktop_rt(stream: C.Stream, args, memory: C.MemoryLog) -> dict:
    from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
    from desktop_rt.engine.asr.whisper import WhisperBackend, WhisperOptions

    # DESKTOP_RT_WHISPER='{"min_context_seconds": 15}' overrides backend options (tuning runs).
    backend_overrides = json.loads(os.environ.get("DESKTOP_RT_WHISPER", "{}"))
    # desktop-rt runs on the threads the product measures on this machine unless
    # --engine-threads sets them; the other systems get --threads.
    backend_overrides.setdefault("threads", C.engine_threads(args))
    backend = WhisperBackend(args.model, WhisperOptions(**backend_overrides))
    memory.mark("model")
    backend.transcribe(stream.audio[: 2 * C.SAMPLE_RATE], language=args.language)  # warm-up
    memory.mark("warm-up")
    # DESKTOP_RT_STREAMING='{"min_chunk_seconds": 0.5}' overrides engine settings (tuning runs).
    overrides = json.loads(os.environ.get("DESKTOP_RT_STREAMING", "{}"))
    config = StreamingConfig(language=args.language, **overrides)
    tr = StreamingTranscriber(backend, config)
    memory.mark("engine")
    res = C.run_paced(
        stream.audio,
        speed=args.speed,
        insert=tr.insert_audio,
        step=lambda: words_tuple(tr.process().committed),
        finish=lambda: words_tuple(tr.finish().committed),
    )
    memory.mark("stream")
    out = paced_dict(res)
    out["inferences"] = tr.inferences
    out["rehearings"] = tr.rehearings
    out["unprompted"] = tr.unprompted
    cfg = {k: getattr(config, k) for k in config.__dataclass_fields__}
    out["config"] = {
        "streaming": cfg,
        "beam_size": backend.options.beam_size,
        "threads": backend.options.threads,
    }
    return out


def child_offline(stream: C.Stream, args, memory: C.MemoryLog) -> dict:
    """faster-whisper on the whole file once the audio has ended: latency = processing time."""
    from faster_whisper import WhisperModel

    model = WhisperModel(
        str(args.model),
        device="cpu",
        compute_type="int8",
        cpu_threads=args.threads,
        num_workers=1,
        local_files_only=True,
    )
    memory.mark("model")
    list(model.transcribe(stream.audio[: 2 * C.SAMPLE_RATE], language=args.language)[0])  # warm-up
    memory.mark("warm-up")
    busy0 = C.system_busy_seconds()
    cpu0, t0 = time.process_time(), time.monotonic()
    words = offline_words(model, stream.audio, args.language)
    took = time.monotonic() - t0
    cpu = time.process_time() - cpu0
    busy1 = C.system_busy_seconds()
    memory.mark("stream")
    return {
        "words": [{"text": t, "start": s, "end": e, "commit": None} for t, s, e in words],
        "latency_all_words": took,
        "final_latency": took,
        "cpu_seconds": cpu,
        "wall_seconds": took,
        "steps": 1,
        "max_backlog": 0.0,
        "slow_steps": [[0.0, round(took, 3)]],
        "other_load": C.other_load(busy0, busy1, cpu, took),
        "config": {"beam_size": OFFLINE_BEAM, "threads": args.threads, "vad_filter": False},
    }


def run_replay(args) -> int:
    """Feed desktop-rt exactly the batches a recorded run got (its backlog), and print the result."""
    from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
    from desktop_rt.engine.asr.whisper import WhisperBackend, WhisperOptions

    report = json.loads(Path(args.replay).read_text())
    runs = report["streams"][args.stream]["systems"][OURS]
    raw = next(r["raw"] for r in runs if r["run"] == args.run)
    stream = C.build_stream(args.stream)
    backend = WhisperBackend(
        args.model or report["model"],
        WhisperOptions(threads=args.threads or report["args"]["threads"]),
    )
    tr = StreamingTranscriber(
        backend, StreamingConfig(language=args.language or report["args"]["language"])
    )
    words = C.replay(
        stream.audio,
        raw["schedule"],
        insert=tr.insert_audio,
        step=lambda: words_tuple(tr.process().committed),
        finish=lambda: words_tuple(tr.finish().committed),
    )
    text = "".join(w[0] for w in words)
    print(
        f"recorded: WER {C.wer(stream.reference, ''.join(w['text'] for w in raw['words'])) * 100:.1f}%"
    )
    print(f"replayed: WER {C.wer(stream.reference, text) * 100:.1f}%: {text.strip()}")
    return 0


CHILDREN = {  # system -> child(stream, args, memory)
    OURS: child_desktop_rt,
    SESSION: child_desktop_rt_session,
    OFFLINE: child_offline,
    **{
        variant: lambda stream, args, memory, variant=variant: child_peer(
            stream, args, variant, memory
        )
        for variant in PEER_VARIANTS
    },
}


def run_child(args) -> int:
    memory = C.MemoryLog()
    memory.mark("start")
    stream = C.build_stream(args.stream)
    memory.data_loaded()  # from here on, what the process adds is the system's
    if args.one not in CHILDREN:
        raise SystemExit(f"unknown system {args.one!r}")
    out = CHILDREN[args.one](stream, args, memory)
    out.update(
        system=args.one,
        stream=args.stream,
        audio_seconds=stream.seconds,
        speed=args.speed,
        python=sys.executable,
    )
    out.update(memory.summary())
    if args.json:
        print(json.dumps(out))
    else:
        print("".join(w["text"] for w in out["words"]).strip())
        print({k: v for k, v in out.items() if k != "words"})
    return 0
