"""Reading one JSON field of a client event: its type, its range, its size.

Each reader returns the value or raises :class:`ProtocolError` naming the field (``param``):
``invalid_type`` for a value of the wrong JSON type, ``invalid_value`` for one out of range,
too large, or not valid Unicode. The size bounds of the text fields a session keeps are here,
so no client can make a session hold more than a few KiB of settings (docs/protocol.md).
"""

from __future__ import annotations

from typing import Any

from desktop_rt.errors import DesktopRtError

__all__ = [
    "ProtocolError",
    "MAX_PROMPT_BYTES",
    "MAX_LANGUAGE_BYTES",
    "MAX_NAME_BYTES",
    "MAX_INCLUDE_ITEMS",
    "invalid_type",
    "json_object",
    "bounded_int",
    "bounded_text",
    "optional_text",
    "text_list",
    "shown",
]

MAX_PROMPT_BYTES = 16 * 1024
"""A prompt's UTF-8 bytes: far above any model's prompt window (Whisper's is 224 tokens)."""
MAX_LANGUAGE_BYTES = 64
"""A language tag: BCP-47 tags in use are at most 35 characters."""
MAX_NAME_BYTES = 256
"""A model name, and each entry of a list of names (``include``)."""
MAX_INCLUDE_ITEMS = 16


class ProtocolError(DesktopRtError):
    """A client event that cannot be honoured; becomes an ``error`` event, never a closed socket.

    ``type`` is OpenAI's error type, ``code`` a stable machine-readable reason, ``param`` the
    dotted path of the offending field, ``event_id`` the client's ``event_id`` when it sent one.
    """

    def __init__(
        self,
        message: str,
        *,
        code: str = "invalid_value",
        param: str | None = None,
        type: str = "invalid_request_error",
        event_id: str | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.code = code
        self.param = param
        self.type = type
        self.event_id = event_id


def shown(value: object, limit: int = 40) -> str:
    """``repr(value)``, cut to about ``limit`` characters, for quoting a client's value."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {
        dict: "an object",
        list: "an array",
        str: "a string",
        int: "an integer",
        float: "a number",
    }.get(type(value), type(value).__name__)


def invalid_type(param: str, expected: str, value: object) -> ProtocolError:
    return ProtocolError(
        f"'{param}' must be {expected}, not {_type_name(value)}", code="invalid_type", param=param
    )


def json_object(value: object, param: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise invalid_type(param, "an object", value)
    return value


def bounded_int(value: object, param: str, low: int, high: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid_type(param, f"an integer ({what})", value)
    if not low <= value <= high:
        raise ProtocolError(f"'{param}' must be {what}; got {value}", param=param)
    return value


def bounded_text(value: str, param: str, max_bytes: int) -> str:
    """``value`` if it is valid Unicode of at most ``max_bytes`` UTF-8 bytes."""
    if len(value) <= max_bytes:  # else too long already: every character is at least a byte
        try:
            size = len(value.encode("utf-8"))
        except UnicodeEncodeError as exc:  # JSON's "\ud800" escapes decode to lone surrogates
            raise ProtocolError(
                f"'{param}' is not valid Unicode: it holds a lone surrogate "
                f"(U+{ord(value[exc.start]):04X}) at character {exc.start}",
                param=param,
            ) from None
        if size <= max_bytes:
            return value
        measured = f"{size} bytes"
    else:
        measured = f"{len(value)} characters"
    raise ProtocolError(
        f"'{param}' is too long ({measured}); at most {max_bytes} bytes of UTF-8 are allowed",
        param=param,
    )


def optional_text(value: object, param: str, max_bytes: int) -> str | None:
    """A string (bounded as :func:`bounded_text`) or null."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise invalid_type(param, "a string or null", value)
    return bounded_text(value, param, max_bytes)


def text_list(value: object, param: str, max_items: int, max_bytes: int) -> tuple[str, ...]:
    """A list of at most ``max_items`` strings, each bounded as :func:`bounded_text`; null: ()."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise invalid_type(param, "an array of strings", value)
    if len(value) > max_items:
        raise ProtocolError(
            f"'{param}' has {len(value)} entries, at most {max_items} are allowed", param=param
        )
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise invalid_type(f"{param}[{i}]", "a string", item)
        out.append(bounded_text(item, f"{param}[{i}]", max_bytes))
    return tuple(out)
