"""JSON export of a :class:`~desktop_rt.history.transcript.Transcript`, and reading it back.

:func:`to_json` writes a stable schema (times in seconds rounded to milliseconds; a segment's
``speaker`` and ``translation`` only when it has them, so one-stream exports without translation
keep their schema); :func:`from_json` reads what it wrote, raising
:class:`InvalidTranscriptError` for anything else. Pure functions.
"""

from __future__ import annotations

import json
import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from desktop_rt.core_types import Word
from desktop_rt.errors import DesktopRtError
from desktop_rt.history.transcript import Segment, Transcript

__all__ = ["to_json", "from_json", "ExportError", "InvalidTranscriptError", "milliseconds"]


class ExportError(DesktopRtError):
    """A transcript could not be exported."""


class InvalidTranscriptError(ExportError, ValueError):
    """Text that should be a JSON transcript is not one."""


def milliseconds(seconds: float) -> int:
    """Seconds to whole milliseconds, half-up on the decimal value; negatives and NaN give 0."""
    value = float(seconds)
    if not math.isfinite(value) or value <= 0:
        return 0
    return int(Decimal(repr(value)).scaleb(3).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _seconds(value: float) -> float:
    return milliseconds(value) / 1000


def _probability(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def to_json(t: Transcript) -> str:
    """JSON with a stable schema; times are seconds rounded to milliseconds."""
    document: dict[str, Any] = {
        "title": t.title,
        "language": t.language,
        "created": t.created,
        "text": t.text,
        **({"translation": t.translation} if t.translation else {}),
        "segments": [
            {
                "start": _seconds(s.start),
                "end": _seconds(s.end),
                "text": s.text,
                **({"speaker": s.speaker} if s.speaker else {}),
                **({"translation": s.translation} if s.translation else {}),
                "words": [
                    {
                        "word": w.text,
                        "start": _seconds(w.start),
                        "end": _seconds(w.end),
                        "probability": _probability(w.probability),
                    }
                    for w in s.words
                ],
            }
            for s in t.segments
        ],
    }
    return json.dumps(document, ensure_ascii=False, allow_nan=False, indent=2) + "\n"


def from_json(text: str) -> Transcript:
    """Read back what :func:`to_json` wrote."""
    try:
        doc = json.loads(text)
        segments = tuple(
            Segment(
                float(s["start"]),
                float(s["end"]),
                str(s["text"]),
                tuple(
                    Word(
                        str(w["word"]),
                        float(w["start"]),
                        float(w["end"]),
                        1.0 if w.get("probability") is None else float(w["probability"]),
                    )
                    for w in s.get("words", ())
                ),
                None if s.get("speaker") is None else str(s["speaker"]),
                None if s.get("translation") is None else str(s["translation"]),
            )
            for s in doc["segments"]
        )
        return Transcript(
            segments, str(doc.get("title") or ""), doc.get("language"), doc.get("created")
        )
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise InvalidTranscriptError(
            f"This is not a desktop-rt JSON transcript ({exc}). Open a file saved as JSON."
        ) from exc
