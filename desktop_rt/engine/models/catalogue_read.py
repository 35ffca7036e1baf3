"""Reading one ``[models.ID]`` table of the models file into a checked :class:`ModelEntry`.

:func:`read_entry` checks what every entry shares (id, keys, ttl, limits, source, option types)
and asks the entry's kind (:func:`~desktop_rt.engine.models.kinds.kind_named`) about the rest.
Every error is a :class:`ModelsFileError` built by :class:`Where`, which names the file, the line
and the dotted key.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from desktop_rt.engine.asr.llama.prompt_format import ENCODER_BLOCK_CHOICES
from desktop_rt.engine.models.embedded import DEFAULT_MODEL_ID
from desktop_rt.engine.models.entry import ModelEntry, ModelsFileError, ModelSource, OptionValue
from desktop_rt.engine.models.kind_protocol import BackendKind, EntryFieldError
from desktop_rt.engine.models.kinds import BACKENDS, WHISPER, kind_named

__all__ = [
    "Where",
    "ID_PATTERN",
    "OPTION_CHOICES",
    "check_option",
    "read_entry",
    "read_number",
    "read_table",
    "type_word",
]

OPTION_CHOICES: dict[str, tuple[OptionValue, ...]] = {
    "encoder_block_seconds": ENCODER_BLOCK_CHOICES,
}
"""Options that take only a few values."""

ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_ENTRY_KEYS = {"backend", "paths", "cmd", "env", "options", "ttl", "concurrency_limit", "source"}
_EMBEDDED_FIXED = ("backend", "paths", "cmd", "source", "env")
_PATH_KEYS = {"model", "mmproj"}
_SOURCE_KEYS = {"repo", "revision", "sha256"}


class Where:
    """Finds the line of a key in the file text, for error messages."""

    def __init__(self, path: Path | None, text: str):
        self.path = path
        self.lines = text.splitlines()

    def _header(self, table: str) -> int | None:
        parts = table.split(".")
        names = (rf"(?:{re.escape(p)}|\"{re.escape(p)}\"|'{re.escape(p)}')" for p in parts)
        pattern = r"\s*\[\s*" + r"\s*\.\s*".join(names) + r"\s*\]"
        for number, line in enumerate(self.lines, 1):
            if re.match(pattern, line):
                return number
        return None

    def _key_line(self, start: int, key: str) -> int:
        for number in range(start + 1, len(self.lines) + 1):
            text = self.lines[number - 1]
            if re.match(r"\s*\[", text):
                break
            if re.match(rf"\s*[\"']?{re.escape(key)}[\"']?\s*[=.]", text):
                return number
        return start

    def line(self, dotted: str) -> int | None:
        """The line of ``models.ID.key`` (or the table's header, or the first mention of the id)."""
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):
            start = self._header(".".join(parts[:cut]))
            if start is not None:
                return self._key_line(start, parts[cut]) if cut < len(parts) else start
        needle = parts[1] if len(parts) > 1 and parts[0] == "models" else parts[-1]
        for number, text in enumerate(self.lines, 1):
            if re.search(rf"\b{re.escape(needle)}\b", text):
                return number
        return None

    def error(self, dotted: str, message: str) -> ModelsFileError:
        if self.path is None:  # an entry built in code: its line means nothing to anyone
            return ModelsFileError(f"{dotted}: {message}")
        line = self.line(dotted)
        at = f", line {line}" if line else ""
        return ModelsFileError(f"{self.path}{at}: {dotted}: {message}")


def type_word(value: object) -> str:
    """``value``'s TOML type in words, for messages."""
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, dict):
        return "a table"
    return "an array" if isinstance(value, list) else type(value).__name__


def read_number(where: Where, key: str, value: object, *, integer: bool, what: str) -> float:
    """A number that is not negative (a whole one with ``integer``), else an error naming ``what``."""
    ok = not isinstance(value, bool) and isinstance(value, int if integer else (int, float))
    if not ok or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise where.error(key, f"must be {what}, not {type_word(value)}")
    return value


def _string(where: Where, key: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise where.error(key, f"must be a non-empty string, not {type_word(value)}")
    return value.strip()


def read_table(
    where: Where, key: str, value: object, allowed: set[str] | None = None
) -> dict[str, Any]:
    """``value`` as a table whose keys are all in ``allowed`` (any key when None)."""
    if not isinstance(value, dict):
        raise where.error(key, f"must be a table, not {type_word(value)}")
    for name in value:
        if allowed is not None and name not in allowed:
            raise where.error(
                f"{key}.{name}",
                f"unknown key; {key.rsplit('.', 1)[-1]} takes {', '.join(sorted(allowed))}",
            )
    return value


def check_option(
    kind: BackendKind, name: str, value: object, complain: Callable[[str], ModelsFileError]
) -> OptionValue:
    """``value`` typed as ``kind`` wants its option ``name``; ``complain(message)`` otherwise."""
    types: Mapping[str, type] = kind.options
    if name not in types:
        raise complain(
            f"unknown option for a {kind.name} model; it takes {', '.join(sorted(types))}"
        )
    want = types[name]
    if want is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, want) or (want is int and isinstance(value, bool)):
        word = (
            "a number" if want in (int, float) else "true or false" if want is bool else "a string"
        )
        raise complain(f"must be {word}, not {type_word(value)}")
    if isinstance(value, (int, float)) and (value < 0 or not math.isfinite(value)):
        raise complain(f"must not be negative, got {value}")
    choices = OPTION_CHOICES.get(name)
    if choices is not None and value not in choices:
        raise complain(f"must be one of {', '.join(map(str, choices))}, got {value}")
    return cast(OptionValue, value)  # an instance of ``want``, one of the option types


def _kind(where: Where, key: str, table: dict[str, Any], embedded: bool) -> BackendKind:
    if embedded:
        for name in _EMBEDDED_FIXED:
            if name in table:
                raise where.error(
                    f"{key}.{name}",
                    f"'{DEFAULT_MODEL_ID}' is the embedded model: only its ttl, concurrency_limit "
                    f"and options can be set. Give another model another id.",
                )
        return WHISPER
    choices = ", ".join(repr(b) for b in BACKENDS)
    if "backend" not in table:
        raise where.error(key, f"needs backend = one of {choices}")
    backend = table["backend"]
    kind = kind_named(backend) if isinstance(backend, str) else None
    if kind is None:
        raise where.error(f"{key}.backend", f"must be one of {choices}, not {type_word(backend)}")
    return kind


def _files(where: Where, key: str, table: dict[str, Any]) -> tuple[str | None, ...]:
    """``paths.model``, ``paths.mmproj`` and ``cmd`` (None where absent)."""
    paths = read_table(where, f"{key}.paths", table.get("paths", {}), _PATH_KEYS)
    return tuple(
        _string(where, dotted, raw[name]) if name in raw else None
        for dotted, raw, name in (
            (f"{key}.paths.model", paths, "model"),
            (f"{key}.paths.mmproj", paths, "mmproj"),
            (f"{key}.cmd", table, "cmd"),
        )
    )


def _source(where: Where, key: str, raw: object) -> ModelSource:
    table = read_table(where, key, raw, _SOURCE_KEYS)
    hashes = read_table(where, f"{key}.sha256", table.get("sha256", {}))
    for name, digest in hashes.items():
        if not isinstance(digest, str) or not _HEX64.fullmatch(digest.lower()):
            raise where.error(f"{key}.sha256.{name}", "must be 64 hex digits")
    revision = table.get("revision")
    return ModelSource(
        _string(where, f"{key}.repo", table.get("repo")),
        _string(where, f"{key}.revision", revision) if "revision" in table else None,
        tuple((n, d.lower()) for n, d in hashes.items()),
    )


def _settings(where: Where, key: str, table: dict[str, Any], kind: BackendKind) -> dict[str, Any]:
    """``env``, ``options``, ``source``, ``ttl`` and ``concurrency_limit``, checked."""
    env = read_table(where, f"{key}.env", table.get("env", {}))
    for name, value in env.items():
        if not isinstance(value, str):
            raise where.error(f"{key}.env.{name}", f"must be a string, not {type_word(value)}")
    options = read_table(where, f"{key}.options", table.get("options", {}))

    def complain(name: str) -> Callable[[str], ModelsFileError]:
        return lambda message: where.error(f"{key}.options.{name}", message)

    ttl, limit = table.get("ttl", 0), table.get("concurrency_limit", 0)
    return {
        "env": tuple(env.items()),
        "options": tuple((n, check_option(kind, n, v, complain(n))) for n, v in options.items()),
        "source": _source(where, f"{key}.source", table["source"]) if "source" in table else None,
        "ttl": float(
            read_number(
                where,
                f"{key}.ttl",
                ttl,
                integer=False,
                what="a number of seconds (0: never unload)",
            )
        ),
        "concurrency_limit": int(
            read_number(
                where,
                f"{key}.concurrency_limit",
                limit,
                integer=True,
                what="a whole number of sessions (0: no limit)",
            )
        ),
    }


def read_entry(where: Where, model_id: str, raw: object) -> ModelEntry:
    """The entry ``[models.<model_id>]`` from its raw TOML table, checked."""
    key = f"models.{model_id}"
    if not ID_PATTERN.fullmatch(model_id):
        raise where.error(
            key,
            "a model id uses letters, digits and . _ : - (it goes in URLs), starting with a letter or digit",
        )
    table = read_table(where, key, raw, _ENTRY_KEYS)
    embedded = model_id == DEFAULT_MODEL_ID
    kind = _kind(where, key, table, embedded)
    model_path, mmproj, cmd = _files(where, key, table)
    raw_env = table.get("env")
    entry = ModelEntry(
        model_id,
        kind.name,
        model_path,
        mmproj,
        cmd,
        env=tuple(raw_env.items()) if isinstance(raw_env, dict) else (),
        embedded=embedded,
    )
    entry = replace(entry, **_settings(where, key, table, kind))
    try:
        kind.validate(entry)  # after the settings: a remote model's url is an option
    except EntryFieldError as exc:
        raise where.error(f"{key}.{exc.field}" if exc.field else key, exc.message) from None
    return entry
