"""Spellings a session corrects in its recognizer's context: :class:`Respelling`.

A :class:`Respelling` says that ``old`` (one or more words) is written ``new`` from now on:
desktop-rt's ``transcription.respellings``, each ``{"from": old, "to": new}`` (docs/protocol.md).
The recognizer applies a session's respellings to the committed text its prompt is built from
(``engine.asr.respelling``; a ``Configure`` command carries them beside the prompt); the text
already sent to clients stands. :func:`parse_respellings` reads the wire field. No I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from desktop_rt.engine.protocol.fields import (
    MAX_NAME_BYTES,
    ProtocolError,
    bounded_text,
    invalid_type,
    json_object,
    shown,
)

__all__ = ["MAX_RESPELLINGS", "Respelling", "parse_respellings"]

MAX_RESPELLINGS = 64
_WORD = re.compile(r"\w")


@dataclass(frozen=True)
class Respelling:
    """``old`` (words, matched whole and in any case) is written ``new``."""

    old: str
    new: str

    def to_wire(self) -> dict[str, str]:
        return {"from": self.old, "to": self.new}


def _text(obj: dict[str, Any], key: str, param: str) -> str:
    if key not in obj:
        raise ProtocolError(f"'{param}' is missing; give the words as a string", param=param)
    value = obj[key]
    if not isinstance(value, str):
        raise invalid_type(param, "a string", value)
    text = " ".join(bounded_text(value, param, MAX_NAME_BYTES).split())
    if not _WORD.search(text):
        raise ProtocolError(
            f"'{param}' holds no word; give the word(s) to respell, such as 'Dashwud'",
            param=param,
        )
    return text


def _respelling(value: object, param: str) -> Respelling:
    obj = json_object(value, param)
    old, new = _text(obj, "from", f"{param}.from"), _text(obj, "to", f"{param}.to")
    if old == new:
        raise ProtocolError(
            f"'{param}' respells {shown(old)} as itself; leave it out, or give a new spelling",
            param=param,
        )
    return Respelling(old, new)


def parse_respellings(value: object, param: str) -> tuple[Respelling, ...]:
    """An array of at most :data:`MAX_RESPELLINGS` ``{"from", "to"}`` objects; null: ()."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise invalid_type(param, 'an array of {"from": ..., "to": ...} objects', value)
    if len(value) > MAX_RESPELLINGS:
        raise ProtocolError(
            f"'{param}' has {len(value)} entries, at most {MAX_RESPELLINGS} are allowed",
            param=param,
        )
    return tuple(_respelling(item, f"{param}[{i}]") for i, item in enumerate(value))
