"""Writing the models file: :func:`dumps_models` turns a config back into TOML text.

The text reads back to an equal config (strings are escaped, floats keep their repr); the
embedded entry is written only when it has settings. Comments are not kept.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from desktop_rt.engine.models.entry import EMBEDDED_ENTRY, ModelEntry, OptionValue

if TYPE_CHECKING:
    from desktop_rt.engine.models.catalogue import ModelsConfig

__all__ = ["dumps_models"]

_BARE = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _key(name: str) -> str:
    return name if _BARE.fullmatch(name) else _str(name)


def _str(value: str) -> str:
    out = []
    for ch in value:
        code = ord(ch)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _value(value: OptionValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return repr(value)
        return "inf" if value > 0 else "-inf" if value < 0 else "nan"
    return _str(str(value))


def _number(seconds: float) -> float | int:
    """A whole number of seconds without its ``.0``."""
    return int(seconds) if seconds == int(seconds) else seconds


def _inline(pairs: Iterable[tuple[str, OptionValue]]) -> str:
    return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in pairs) + " }"


def _entry_lines(entry: ModelEntry) -> list[str]:
    lines = ["", f"[models.{_key(entry.id)}]"]
    if not entry.embedded:
        lines.append(f"backend = {_str(entry.backend)}")
    if entry.cmd is not None:
        lines.append(f"cmd = {_str(entry.cmd)}")
    if entry.ttl:
        lines.append(f"ttl = {_value(_number(entry.ttl))}")
    if entry.concurrency_limit:
        lines.append(f"concurrency_limit = {entry.concurrency_limit}")
    named = (("model", entry.model_path), ("mmproj", entry.mmproj))
    paths = [(k, v) for k, v in named if v is not None]
    if paths:
        lines.append(f"paths = {_inline(paths)}")
    if entry.options:
        lines.append(f"options = {_inline(entry.options)}")
    if entry.env:
        lines.append(f"env = {_inline(entry.env)}")
    src = entry.source
    if src is not None:
        lines += ["", f"[models.{_key(entry.id)}.source]", f"repo = {_str(src.repo)}"]
        if src.revision:
            lines.append(f"revision = {_str(src.revision)}")
        if src.sha256:
            lines.append(f"sha256 = {_inline(src.sha256)}")
    return lines


def dumps_models(config: ModelsConfig) -> str:
    """The TOML text of ``config`` (the embedded entry only when it has settings)."""
    lines = [
        "# desktop-rt models: see `desktop-rt models --help`. Edited by `desktop-rt models add/remove`.",
        f"global_concurrency_limit = {config.global_concurrency_limit}",
        f"max_loaded_models = {config.max_loaded_models}",
        f"wait_timeout = {_value(_number(config.wait_timeout))}",
        f"load_timeout = {_value(_number(config.load_timeout))}",
    ]
    if config.aliases:
        lines += ["", "[aliases]", *(f"{_key(n)} = {_str(t)}" for n, t in config.aliases)]
    for entry in config.entries:
        if not (entry.embedded and entry == EMBEDDED_ENTRY):
            lines += _entry_lines(entry)
    return "\n".join(lines) + "\n"
