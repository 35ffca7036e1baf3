"""The bodies of ``POST /v1/audio/transcriptions`` (and ``translations``) answers, in OpenAI's
shapes.

Pure functions: :func:`render` turns a file's words into one ``response_format`` (``json``,
``text``, ``srt``, ``vtt``, ``verbose_json``; a translation's says task ``translate`` and
language ``english``, as OpenAI's does); :func:`sse` frames one server-sent event
(``transcript.text.delta``, ``transcript.text.done``, or an ``error``). Captions and segments
are the cues of :func:`~desktop_rt.history.transcript.segments_from_words`, as
``desktop-rt transcribe`` writes them.
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Sequence
from typing import Any

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.backend import Task
from desktop_rt.history.export import Transcript, segments_from_words, to_srt, to_vtt

__all__ = ["FORMATS", "STREAMED_FORMATS", "render", "sse", "usage"]

FORMATS = ("json", "text", "srt", "vtt", "verbose_json")
STREAMED_FORMATS = ("json", "text")  # OpenAI streams these only

_LANGUAGES = {
    "en": "english", "de": "german", "fr": "french", "es": "spanish", "it": "italian",
    "pt": "portuguese", "nl": "dutch", "ru": "russian", "zh": "chinese", "ja": "japanese",
    "ko": "korean", "pl": "polish", "tr": "turkish", "uk": "ukrainian", "sv": "swedish",
    "ar": "arabic", "hi": "hindi", "cs": "czech", "fi": "finnish", "da": "danish",
}  # fmt: skip


def usage(seconds: float) -> dict[str, Any]:
    """OpenAI's duration usage: whole seconds of input audio, rounded up."""
    return {"type": "duration", "seconds": math.ceil(seconds)}


def render(
    words: Sequence[Word],
    fmt: str,
    *,
    language: str | None,
    seconds: float,
    with_words: bool = False,
    task: Task = "transcribe",
) -> tuple[bytes, str]:
    """The body and Content-Type of a ``fmt`` answer for a file's ``words`` (file time)."""
    text = "".join(w.text for w in words).strip()
    if fmt == "text":
        return (text + "\n").encode(), "text/plain; charset=utf-8"
    if fmt in ("srt", "vtt"):
        transcript = Transcript(segments=segments_from_words(words), language=language)
        body = to_srt(transcript) if fmt == "srt" else to_vtt(transcript)
        return body.encode(), "text/plain; charset=utf-8"
    payload: dict[str, Any] = {"text": text, "usage": usage(seconds)}
    if fmt == "verbose_json":
        payload = _verbose(words, text, language, seconds, with_words)
        if task == "translate":
            payload.update(task="translate", language="english")
    return json.dumps(payload, ensure_ascii=False).encode(), "application/json"


def _verbose(
    words: Sequence[Word], text: str, language: str | None, seconds: float, with_words: bool
) -> dict[str, Any]:
    segments = [
        {
            "id": index,
            "seek": int(round(segment.start * 100)),
            "start": round(segment.start, 3),
            "end": round(segment.end, 3),
            "text": " " + segment.text,
            "tokens": [],
            "temperature": 0.0,
            "avg_logprob": _avg_logprob(segment.words),
            "compression_ratio": _compression_ratio(segment.text),
            "no_speech_prob": 0.0,
        }
        for index, segment in enumerate(segments_from_words(words))
    ]
    payload: dict[str, Any] = {
        "task": "transcribe",
        "language": _LANGUAGES.get(language or "", language or ""),
        "duration": round(seconds, 3),
        "text": text,
        "segments": segments,
        "usage": usage(seconds),
    }
    if with_words:
        payload["words"] = [
            {"word": w.text.strip(), "start": round(w.start, 3), "end": round(w.end, 3)}
            for w in words
            if w.text.strip()
        ]
    return payload


def _avg_logprob(words: Sequence[Word]) -> float:
    if not words:
        return 0.0
    return round(sum(math.log(max(w.probability, 1e-6)) for w in words) / len(words), 4)


def _compression_ratio(text: str) -> float:
    data = text.encode()
    return round(len(data) / len(zlib.compress(data)), 4) if data else 0.0


def sse(event: dict[str, Any]) -> bytes:
    """One server-sent event: ``data: <json>`` and a blank line."""
    return b"data: " + json.dumps(event, ensure_ascii=False).encode() + b"\n\n"
