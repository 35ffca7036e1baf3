"""Live translation's cost: extra CPU per audio second, and how far the English line lags.

Usage: ``.venv/bin/python bench/bench_translation.py [--stream librivox] [--language fr]``

Starts the real server on the embedded model in this process, and streams the eval stream to
``/v1/realtime`` in real time (100 ms appends, server_vad on: one item per sentence), once
without and once with ``transcription.translate``. Reports this process's CPU seconds per audio
second in each run (``--replay``: no server and no clock, the transcript's and the English
stream's own CPU over the same passes, which a busy machine does not skew) (the difference is translation's cost), and per item how much later the
English line's first words and its completed text arrive than the original's, and how long
after the end of each sentence's speech (server VAD) each line completes. ``--language``
is what the speech is declared to be (default ``fr``: an English clip declared French makes
Whisper really translate, as it would for French speech). Other load on the machine is
reported too: the CPUs may be shared.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import (  # noqa: E402
    CHUNK_SECONDS,
    SAMPLE_RATE,
    build_stream,
    loadavg,
    machine_info,
    other_load,
    system_busy_seconds,
)

_PREFIX = "conversation.item.input_audio_transcription"
_STOPPED = "input_audio_buffer.speech_stopped"


async def _run(url: str, audio, language: str, translate: bool) -> dict[str, dict[str, float]]:
    """Stream ``audio`` in real time; per item, when its first delta and completion arrived."""
    from websockets.asyncio.client import connect

    from desktop_rt.engine.audio.codecs import float_to_pcm16

    seen: dict[str, dict[str, float]] = {}
    async with connect(url, max_size=None) as ws:
        transcription: dict = {"language": language}
        if translate:
            transcription["translate"] = True
        session = {"type": "transcription", "audio": {"input": {
            "format": {"type": "audio/pcm", "rate": SAMPLE_RATE},
            "transcription": transcription,
            "turn_detection": {"type": "server_vad", "silence_duration_ms": 500}}}}  # fmt: skip
        await ws.send(json.dumps({"type": "session.update", "session": session}))

        async def read() -> None:
            async for raw in ws:
                event = json.loads(raw)
                kind, item = event["type"], event.get("item_id")
                if item is None or not kind.startswith((_PREFIX, _STOPPED)):
                    continue
                name = kind.removeprefix(_PREFIX + ".")
                seen.setdefault(item, {}).setdefault(name, time.monotonic())

        reader = asyncio.create_task(read())
        step = int(SAMPLE_RATE * CHUNK_SECONDS)
        start = time.monotonic()
        for i, offset in enumerate(range(0, len(audio), step)):
            pcm = base64.b64encode(float_to_pcm16(audio[offset : offset + step])).decode()
            await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": pcm}))
            await asyncio.sleep(max(0.0, start + (i + 1) * CHUNK_SECONDS - time.monotonic()))
        await ws.send(json.dumps({"type": "input_audio_buffer.commit", "final": True}))
        await reader
    return seen


def _measure(server, audio, language: str, translate: bool) -> dict:
    busy0, cpu0, wall0 = system_busy_seconds(), time.process_time(), time.monotonic()
    seen = asyncio.run(_run(server.url, audio, language, translate))
    cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
    seconds = len(audio) / SAMPLE_RATE
    result = {
        "cpu_per_audio_second": round(cpu / seconds, 3),
        "other_load_cores": round(other_load(busy0, system_busy_seconds(), cpu, wall) or 0, 2),
        "items": sum(1 for t in seen.values() if "completed" in t),
    }
    after_speech = [t["completed"] - t[_STOPPED] for t in seen.values() if _STOPPED in t]
    result["completed_after_speech_end_s"] = _spread([v for v in after_speech if v >= 0])
    if translate:
        english = [t["translation.completed"] - t[_STOPPED] for t in seen.values()
                   if _STOPPED in t and "translation.completed" in t]  # fmt: skip
        result["english_completed_after_speech_end_s"] = _spread(english)
        first = [t["translation.delta"] - t["delta"] for t in seen.values()
                 if "delta" in t and "translation.delta" in t]  # fmt: skip
        done = [t["translation.completed"] - t["completed"] for t in seen.values()
                if "completed" in t and "translation.completed" in t]  # fmt: skip
        result["english_first_words_later_s"] = _spread(first)
        result["english_completed_later_s"] = _spread(done)
    return result


def _replayed(backend, audio, language: str, translate: bool) -> dict:
    """The stream through one StreamingTranscriber, a pass after every 100 ms chunk (an idle
    machine's pace), without the clock: CPU per audio second (nothing else runs in the process),
    and the stream time at which each sentence's last word was committed."""
    from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
    from desktop_rt.engine.asr.translation import EnglishTranslation

    model = EnglishTranslation(backend) if translate else backend
    transcriber = StreamingTranscriber(model, StreamingConfig(language=language))
    step, ends, text = int(SAMPLE_RATE * CHUNK_SECONDS), [], []
    cpu0 = time.process_time()
    for offset in range(0, len(audio) + step, step):
        piece = audio[offset : offset + step]
        if len(piece):
            transcriber.insert_audio(piece)
        update = transcriber.process() if len(piece) else transcriber.finish()
        now = min(len(audio), offset + step) / SAMPLE_RATE
        for word in update.committed:
            text.append(word.text)
            if word.text.rstrip().endswith((".", "?", "!")):
                ends.append(now)
    cpu = time.process_time() - cpu0
    return {
        "cpu_per_audio_second": round(cpu / (len(audio) / SAMPLE_RATE), 3),
        "passes": transcriber.inferences,
        "sentence_ends_committed_at_s": [round(e, 1) for e in ends],
        "text": "".join(text).strip(),
    }


def _spread(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    return {"median": round(statistics.median(values), 2), "max": round(max(values), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stream", default="librivox")
    parser.add_argument("--language", default="fr")
    parser.add_argument("--replay", action="store_true", help="no server, no clock (see above)")
    args = parser.parse_args()
    from desktop_rt.engine.asr.whisper import WhisperBackend
    from desktop_rt.engine.models.embedded import ensure_default_model
    from desktop_rt.engine.server.server import RealtimeServer, ServerConfig

    audio = build_stream(args.stream).audio
    backend = WhisperBackend(ensure_default_model())
    report: dict = {"machine": machine_info(), "loadavg_before": loadavg()}
    try:
        if args.replay:
            report["transcribe"] = _replayed(backend, audio, args.language, False)
            report["translate"] = _replayed(backend, audio, args.language, True)
            print(json.dumps(report, indent=2))
            return
        with RealtimeServer(ServerConfig(port=0, record_activity=False), backend) as server:
            report["audio_seconds"] = round(len(audio) / SAMPLE_RATE, 1)
            report["transcribe_only"] = _measure(server, audio, args.language, False)
            report["with_translation"] = _measure(server, audio, args.language, True)
    finally:
        backend.close()
    off, on = report["transcribe_only"], report["with_translation"]
    report["extra_cpu_per_audio_second"] = round(
        on["cpu_per_audio_second"] - off["cpu_per_audio_second"], 3
    )
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
