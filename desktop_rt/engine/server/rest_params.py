"""The form fields of ``POST /v1/audio/transcriptions``, checked: :class:`TranscriptionParams`.

``TranscriptionParams.from_fields(fields, task)`` (fields as the multipart parser gives them:
name -> values; ``task="translate"`` for ``/v1/audio/translations``, which takes the same
fields) returns the request's settings or raises :class:`RestError` naming the bad field. What
is honoured and what is only accepted is listed in docs/protocol.md ("REST transcriptions").
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from http import HTTPStatus

from desktop_rt.engine.asr.backend import Task
from desktop_rt.engine.server.rest_formats import FORMATS, STREAMED_FORMATS

__all__ = ["RestError", "TranscriptionParams"]

_LANGUAGE = re.compile(r"[a-z]{2,3}")
_CHUNKING = ("auto",)


class RestError(Exception):
    """A request refused with ``status`` and OpenAI's error JSON."""

    def __init__(
        self,
        status: HTTPStatus,
        message: str,
        code: str,
        param: str | None = None,
        type_: str = "invalid_request_error",
    ):
        super().__init__(message)
        self.status, self.message, self.code, self.param, self.type_ = (
            status,
            message,
            code,
            param,
            type_,
        )


def _bad(message: str, param: str, code: str = "invalid_value") -> RestError:
    return RestError(HTTPStatus.BAD_REQUEST, message, code, param)


def _one(fields: Mapping[str, Sequence[str]], name: str) -> str | None:
    values = fields.get(name)
    if not values:
        return None
    if len(values) > 1:
        raise _bad(f"Send '{name}' once.", name)
    return values[0].strip() or None


def _many(fields: Mapping[str, Sequence[str]], name: str) -> list[str]:
    return [v.strip() for v in [*fields.get(name, ()), *fields.get(name + "[]", ())] if v.strip()]


@dataclass(frozen=True)
class TranscriptionParams:
    """One request's settings (see the module docstring)."""

    model: str | None = None
    language: str | None = None
    prompt: str | None = None
    temperature: float | None = None
    response_format: str = "json"
    stream: bool = False
    word_times: bool = False
    task: Task = "transcribe"

    @classmethod
    def from_fields(
        cls, fields: Mapping[str, Sequence[str]], task: Task = "transcribe"
    ) -> TranscriptionParams:
        fmt = (_one(fields, "response_format") or "json").lower()
        if fmt not in FORMATS:
            raise _bad(
                f"response_format '{fmt[:40]}' is not served; use one of {', '.join(FORMATS)}.",
                "response_format",
            )
        stream = _flag(_one(fields, "stream"))
        if stream and fmt not in STREAMED_FORMATS:
            raise _bad(
                f"stream=true answers as server-sent events, with response_format json or text "
                f"(not {fmt}).",
                "stream",
            )
        granularities = _many(fields, "timestamp_granularities")
        for value in granularities:
            if value not in ("word", "segment"):
                raise _bad(
                    f"timestamp_granularities takes 'word' and 'segment', not '{value[:40]}'.",
                    "timestamp_granularities",
                )
        for include in _many(fields, "include"):
            raise _bad(
                f"include '{include[:40]}' is not available: this server gives no token "
                "log probabilities over REST.",
                "include",
                "unsupported_value",
            )
        chunking = _one(fields, "chunking_strategy")
        if chunking is not None and chunking not in _CHUNKING:
            raise _bad(
                "chunking_strategy: only 'auto' is served (files are always cut at pauses).",
                "chunking_strategy",
                "unsupported_value",
            )
        return cls(
            model=_one(fields, "model"),
            language=_language(_one(fields, "language")),
            prompt=_one(fields, "prompt"),
            temperature=_temperature(_one(fields, "temperature")),
            response_format=fmt,
            stream=stream,
            word_times="word" in granularities,
            task=task,
        )


def _flag(value: str | None) -> bool:
    if value is None:
        return False
    if value.lower() in ("true", "1"):
        return True
    if value.lower() in ("false", "0"):
        return False
    raise _bad(f"stream must be true or false, not '{value[:40]}'.", "stream")


def _language(value: str | None) -> str | None:
    if value is None:
        return None
    code = value.lower()
    if not _LANGUAGE.fullmatch(code):
        raise _bad(
            f"language must be an ISO 639-1 code such as 'en', not '{value[:40]}'.", "language"
        )
    return code


def _temperature(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        temperature = float(value)
    except ValueError:
        temperature = -1.0
    if not 0.0 <= temperature <= 1.0:
        raise _bad(f"temperature must be a number from 0 to 1, not '{value[:40]}'.", "temperature")
    return temperature
