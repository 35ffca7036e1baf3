"""The models file: which models the server may route connections to (``<config dir>/models.toml``).

::

    global_concurrency_limit = 8   # websocket sessions at once, all models together (0: no limit)
    max_loaded_models = 1          # models in memory at once; loading another swaps out an idle one

    [models.whisper-small]
    backend = "whisper"            # whisper | llama | command
    ttl = 600                      # seconds after its last session closed until it unloads (0: never)
    concurrency_limit = 2          # sessions at once on this model (0: no limit)
    paths = { model = "/models/faster-whisper-small" }
    options = { threads = 4, language = "en" }

    [models.qwen3-asr]
    backend = "llama"
    paths = { model = "/models/Qwen3-ASR-0.6B.gguf", mmproj = "/models/mmproj-Qwen3-ASR-0.6B.gguf" }
    options = { repeat_penalty = 1.1 }

    [models.lfm-server]
    backend = "command"            # an external realtime server, started on demand
    cmd = "llama-server --port ${PORT} -m /models/a.gguf --mmproj /models/mmproj-a.gguf"
    ttl = 600

The embedded default (``whisper-base``) is always present; a ``[models.whisper-base]`` table may
set its ``ttl``, ``concurrency_limit`` and ``options`` but not its files. :func:`load_models_file`
validates everything and raises :class:`ModelsFileError` naming the file, line and key;
:func:`save_models_file` writes the file back (comments are not kept).
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import tomllib

from desktop_rt.engine.asr.llama.prompt_format import ENCODER_BLOCK_CHOICES
from desktop_rt.engine.models.embedded import DEFAULT_MODEL_ID
from desktop_rt.errors import DesktopRtError
from desktop_rt.paths import config_dir

__all__ = [
    "MODELS_FILE",
    "BACKENDS",
    "OPTION_TYPES",
    "ModelsFileError",
    "ModelSource",
    "ModelEntry",
    "ModelsConfig",
    "EMBEDDED_ENTRY",
    "models_file_path",
    "parse_models_toml",
    "load_models_file",
    "dumps_models",
    "save_models_file",
    "parse_option_value",
]

MODELS_FILE = "models.toml"
BACKENDS = ("whisper", "llama", "command")

OptionValue = str | int | float | bool

OPTION_TYPES: dict[str, dict[str, type]] = {
    "whisper": {
        "threads": int,
        "compute_type": str,
        "beam_size": int,
        "device": str,
        "language": str,
        "context": str,
        "context_pad_seconds": float,
        "min_context_seconds": float,
    },
    "llama": {
        "threads": int,
        "n_ctx": int,
        "n_batch": int,
        "max_tokens": int,
        "repeat_penalty": float,
        "repeat_last_n": int,
        "reuse_cache": bool,
        "draft": bool,
        "force_prefix": bool,
        "max_tokens_per_second": float,
        "token_slack": int,
        "update_seconds": float,
        "encoder_block_seconds": int,
        "language": str,
    },
    "command": {"upstream_model": str, "start_timeout": float},
}
"""The ``options`` each backend takes, with their types (``language`` is a session default)."""

OPTION_CHOICES: dict[str, tuple[OptionValue, ...]] = {
    "encoder_block_seconds": ENCODER_BLOCK_CHOICES,
}
"""Options that take only a few values."""

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_TOP_KEYS = {"global_concurrency_limit", "max_loaded_models", "models"}
_ENTRY_KEYS = {"backend", "paths", "cmd", "env", "options", "ttl", "concurrency_limit", "source"}
_PATH_KEYS = {"model", "mmproj"}
_SOURCE_KEYS = {"repo", "revision", "sha256"}


class ModelsFileError(DesktopRtError):
    """The models file cannot be read, or an entry in it is wrong; the message says where."""


@dataclass(frozen=True)
class ModelSource:
    """Where a downloaded model came from, and the sha256 of each file that was verified."""

    repo: str
    revision: str | None = None
    sha256: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ModelEntry:
    id: str
    backend: str
    model_path: str | None = None
    mmproj: str | None = None
    cmd: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    options: tuple[tuple[str, OptionValue], ...] = ()
    ttl: float = 0.0
    """Seconds after the last session closed before the model unloads; 0 keeps it loaded."""
    concurrency_limit: int = 0
    """Sessions at once on this model; 0 means no limit."""
    source: ModelSource | None = None
    embedded: bool = False

    def option(self, name: str, default: Any = None) -> Any:
        return dict(self.options).get(name, default)

    @property
    def location(self) -> str:
        """The model's files or command, in words (for listings)."""
        if self.embedded:
            return "(embedded)"
        if self.backend == "command":
            return self.cmd or ""
        return self.model_path if not self.mmproj else f"{self.model_path} + {self.mmproj}"


EMBEDDED_ENTRY = ModelEntry(DEFAULT_MODEL_ID, "whisper", embedded=True)


@dataclass(frozen=True)
class ModelsConfig:
    entries: tuple[ModelEntry, ...] = (EMBEDDED_ENTRY,)
    global_concurrency_limit: int = 0
    """Websocket sessions at once over all models; 0 means no limit."""
    max_loaded_models: int = 1
    """Models loaded at once; loading one more first unloads an idle one, or waits for one."""
    path: Path | None = field(default=None, compare=False)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(e.id for e in self.entries)

    def get(self, model_id: str) -> ModelEntry | None:
        return next((e for e in self.entries if e.id == model_id), None)

    def with_entry(self, entry: ModelEntry) -> ModelsConfig:
        """Add ``entry``, or replace the one with its id (keeping its place)."""
        _check_entry(entry, f"models.{entry.id}")
        if self.get(entry.id) is None:
            return replace(self, entries=self.entries + (entry,))
        return replace(self, entries=tuple(entry if e.id == entry.id else e for e in self.entries))

    def without(self, model_id: str) -> ModelsConfig:
        entry = self.get(model_id)
        if entry is None:
            raise ModelsFileError(
                f"There is no model '{model_id}'; `desktop-rt models list` shows them."
            )
        if entry.embedded:
            raise ModelsFileError(
                f"'{model_id}' is the embedded model; it cannot be removed. Give it a ttl or a "
                f"concurrency_limit instead if you want it unloaded or limited."
            )
        return replace(self, entries=tuple(e for e in self.entries if e.id != model_id))


def models_file_path() -> Path:
    return config_dir() / MODELS_FILE


# ---- reading --------------------------------------------------------------------------------


class _Where:
    """Finds the line of a key in the file text, for error messages."""

    def __init__(self, path: Path | None, text: str):
        self.path = path
        self.lines = text.splitlines()

    def _header(self, table: str) -> int | None:
        parts = table.split(".")
        pattern = (
            r"\s*\[\s*"
            + r"\s*\.\s*".join(
                rf"(?:{re.escape(p)}|\"{re.escape(p)}\"|'{re.escape(p)}')" for p in parts
            )
            + r"\s*\]"
        )
        for number, line in enumerate(self.lines, 1):
            if re.match(pattern, line):
                return number
        return None

    def line(self, dotted: str) -> int | None:
        """The line of ``models.ID.key`` (or the table's header, or the first mention of the id)."""
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):
            table, key = ".".join(parts[:cut]), parts[cut] if cut < len(parts) else None
            start = self._header(table)
            if start is None:
                continue
            if key is None:
                return start
            for number in range(start + 1, len(self.lines) + 1):
                text = self.lines[number - 1]
                if re.match(r"\s*\[", text):
                    break
                if re.match(rf"\s*[\"']?{re.escape(key)}[\"']?\s*[=.]", text):
                    return number
            return start
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


def _type_word(value: object) -> str:
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {value!r}"
    return {dict: "a table", list: "an array"}.get(type(value), type(value).__name__)


def _number(where: _Where, key: str, value: object, *, integer: bool, what: str) -> float | int:
    ok = not isinstance(value, bool) and isinstance(value, int if integer else (int, float))
    if not ok or (isinstance(value, float) and not math.isfinite(value)) or value < 0:
        raise where.error(key, f"must be {what}, not {_type_word(value)}")
    return value


def _string(where: _Where, key: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise where.error(key, f"must be a non-empty string, not {_type_word(value)}")
    return value.strip()


def _table(where: _Where, key: str, value: object, allowed: set[str] | None = None) -> dict:
    if not isinstance(value, dict):
        raise where.error(key, f"must be a table, not {_type_word(value)}")
    if allowed is not None:
        for name in value:
            if name not in allowed:
                raise where.error(
                    f"{key}.{name}",
                    f"unknown key; {key.rsplit('.', 1)[-1]} takes {', '.join(sorted(allowed))}",
                )
    return value


def _option(backend: str, name: str, value: object, complain) -> OptionValue:
    types = OPTION_TYPES[backend]
    if name not in types:
        raise complain(f"unknown option for a {backend} model; it takes {', '.join(sorted(types))}")
    want = types[name]
    if want is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, want) or (want is int and isinstance(value, bool)):
        raise complain(
            f"must be {'a number' if want in (int, float) else 'true or false' if want is bool else 'a string'}, "
            f"not {_type_word(value)}"
        )
    if want in (int, float) and (value < 0 or not math.isfinite(value)):
        raise complain(f"must not be negative, got {value}")
    choices = OPTION_CHOICES.get(name)
    if choices is not None and value not in choices:
        raise complain(f"must be one of {', '.join(map(str, choices))}, got {value}")
    return value


def _entry(where: _Where, model_id: str, raw: object) -> ModelEntry:
    key = f"models.{model_id}"
    if not _ID.fullmatch(model_id):
        raise where.error(
            key,
            "a model id uses letters, digits and . _ : - (it goes in URLs), starting with a letter or digit",
        )
    table = _table(where, key, raw, _ENTRY_KEYS)
    embedded = model_id == DEFAULT_MODEL_ID
    if embedded:
        for name in ("backend", "paths", "cmd", "source", "env"):
            if name in table:
                raise where.error(
                    f"{key}.{name}",
                    f"'{DEFAULT_MODEL_ID}' is the embedded model: only its ttl, concurrency_limit "
                    f"and options can be set. Give another model another id.",
                )
        backend = "whisper"
    else:
        if "backend" not in table:
            raise where.error(key, f"needs backend = one of {', '.join(repr(b) for b in BACKENDS)}")
        backend = table["backend"]
        if backend not in BACKENDS:
            raise where.error(
                f"{key}.backend",
                f"must be one of {', '.join(repr(b) for b in BACKENDS)}, not {_type_word(backend)}",
            )
    paths = _table(where, f"{key}.paths", table.get("paths", {}), _PATH_KEYS)
    model_path = _string(where, f"{key}.paths.model", paths["model"]) if "model" in paths else None
    mmproj = _string(where, f"{key}.paths.mmproj", paths["mmproj"]) if "mmproj" in paths else None
    cmd = _string(where, f"{key}.cmd", table["cmd"]) if "cmd" in table else None
    if backend == "command":
        if cmd is None:
            raise where.error(
                key, 'a command model needs cmd = "... --port ${PORT} ..." (the server to start)'
            )
        if "${PORT}" not in cmd:
            raise where.error(
                f"{key}.cmd",
                "must contain ${PORT}, where desktop-rt puts the port the server listens on",
            )
        if paths:
            raise where.error(
                f"{key}.paths", "a command model has no paths: put the files in its cmd"
            )
    elif not embedded:
        if cmd is not None:
            raise where.error(
                f"{key}.cmd", f"only command models have a cmd; this one is a {backend} model"
            )
        if model_path is None:
            what = "the CTranslate2 model folder" if backend == "whisper" else "the GGUF text model"
            raise where.error(f"{key}.paths", f'needs paths = {{ model = "..." }}: {what}')
        if mmproj is not None and backend != "llama":
            raise where.error(f"{key}.paths.mmproj", "only llama (GGUF) models take an mmproj")
    env = _table(where, f"{key}.env", table.get("env", {}))
    if env and backend != "command":
        raise where.error(f"{key}.env", "only command models take env")
    for name, value in env.items():
        if not isinstance(value, str):
            raise where.error(f"{key}.env.{name}", f"must be a string, not {_type_word(value)}")
    options = _table(where, f"{key}.options", table.get("options", {}))
    checked = tuple(
        (
            name,
            _option(backend, name, value, lambda m, n=name: where.error(f"{key}.options.{n}", m)),
        )
        for name, value in options.items()
    )
    source = None
    if "source" in table:
        raw_source = _table(where, f"{key}.source", table["source"], _SOURCE_KEYS)
        hashes = _table(where, f"{key}.source.sha256", raw_source.get("sha256", {}))
        for name, digest in hashes.items():
            if not isinstance(digest, str) or not _HEX64.fullmatch(digest.lower()):
                raise where.error(f"{key}.source.sha256.{name}", "must be 64 hex digits")
        source = ModelSource(
            _string(where, f"{key}.source.repo", raw_source.get("repo")),
            _string(where, f"{key}.source.revision", raw_source["revision"])
            if "revision" in raw_source
            else None,
            tuple((n, d.lower()) for n, d in hashes.items()),
        )
    return ModelEntry(
        id=model_id,
        backend=backend,
        model_path=model_path,
        mmproj=mmproj,
        cmd=cmd,
        env=tuple(env.items()),
        options=checked,
        ttl=float(
            _number(
                where,
                f"{key}.ttl",
                table.get("ttl", 0),
                integer=False,
                what="a number of seconds (0: never unload)",
            )
        ),
        concurrency_limit=int(
            _number(
                where,
                f"{key}.concurrency_limit",
                table.get("concurrency_limit", 0),
                integer=True,
                what="a whole number of sessions (0: no limit)",
            )
        ),
        source=source,
        embedded=embedded,
    )


def parse_models_toml(text: str, path: Path | None = None) -> ModelsConfig:
    """Read and validate the text of a models file."""
    where = _Where(path, text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ModelsFileError(
            f"{path or 'models file'} is not valid TOML: {exc}. Fix that line."
        ) from None
    for name in data:
        if name not in _TOP_KEYS:
            raise where.error(
                name,
                f"unknown key; the file takes {', '.join(sorted(_TOP_KEYS))} "
                f"(model entries go under [models.ID])",
            )
    global_limit = int(
        _number(
            where,
            "global_concurrency_limit",
            data.get("global_concurrency_limit", 0),
            integer=True,
            what="a whole number of sessions (0: no limit)",
        )
    )
    max_loaded = data.get("max_loaded_models", 1)
    if isinstance(max_loaded, bool) or not isinstance(max_loaded, int) or max_loaded < 1:
        raise where.error(
            "max_loaded_models", f"must be a whole number, 1 or more, not {_type_word(max_loaded)}"
        )
    models = _table(where, "models", data.get("models", {}))
    entries = [_entry(where, model_id, raw) for model_id, raw in models.items()]
    if not any(e.embedded for e in entries):
        entries.insert(0, EMBEDDED_ENTRY)
    return ModelsConfig(tuple(entries), global_limit, max_loaded, path)


def load_models_file(path: Path | str | None = None) -> ModelsConfig:
    """The models file (default ``<config dir>/models.toml``); only the embedded model if absent."""
    path = Path(path) if path is not None else models_file_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ModelsConfig(path=path)
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelsFileError(f"Could not read the models file {path}: {exc}") from None
    return parse_models_toml(text, path)


def _check_entry(entry: ModelEntry, key: str) -> None:
    """Validate an entry built in code (``models add``) by the same rules as the file."""
    text = dumps_models(ModelsConfig((entry,)))
    parse_models_toml(text, None)


# ---- writing --------------------------------------------------------------------------------

_BARE = re.compile(r"[A-Za-z0-9_-]+")


def _key(name: str) -> str:
    return name if _BARE.fullmatch(name) else _str(name)


def _str(value: str) -> str:
    out = []
    for ch in value:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif code < 0x20 or code == 0x7F:
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(ch, f"\\u{code:04x}"))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _value(value: OptionValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return (
            repr(value)
            if math.isfinite(value)
            else ("inf" if value > 0 else "-inf" if value < 0 else "nan")
        )
    return _str(str(value))


def _inline(pairs: Iterable[tuple[str, OptionValue]]) -> str:
    return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in pairs) + " }"


def dumps_models(config: ModelsConfig) -> str:
    """The TOML text of ``config`` (the embedded entry only when it has settings)."""
    lines = [
        "# desktop-rt models: see `desktop-rt models --help`. Edited by `desktop-rt models add/remove`.",
        f"global_concurrency_limit = {config.global_concurrency_limit}",
        f"max_loaded_models = {config.max_loaded_models}",
    ]
    for entry in config.entries:
        if entry.embedded and entry == replace(EMBEDDED_ENTRY):
            continue
        lines += ["", f"[models.{_key(entry.id)}]"]
        if not entry.embedded:
            lines.append(f"backend = {_str(entry.backend)}")
        if entry.cmd is not None:
            lines.append(f"cmd = {_str(entry.cmd)}")
        if entry.ttl:
            lines.append(
                f"ttl = {_value(entry.ttl if entry.ttl != int(entry.ttl) else int(entry.ttl))}"
            )
        if entry.concurrency_limit:
            lines.append(f"concurrency_limit = {entry.concurrency_limit}")
        paths = [
            (k, v)
            for k, v in (("model", entry.model_path), ("mmproj", entry.mmproj))
            if v is not None
        ]
        if paths:
            lines.append(f"paths = {_inline(paths)}")
        if entry.options:
            lines.append(f"options = {_inline(entry.options)}")
        if entry.env:
            lines.append(f"env = {_inline(entry.env)}")
        if entry.source is not None:
            src = entry.source
            lines += ["", f"[models.{_key(entry.id)}.source]", f"repo = {_str(src.repo)}"]
            if src.revision:
                lines.append(f"revision = {_str(src.revision)}")
            if src.sha256:
                lines.append(f"sha256 = {_inline(src.sha256)}")
    return "\n".join(lines) + "\n"


def save_models_file(config: ModelsConfig, path: Path | str | None = None) -> Path:
    """Write ``config`` atomically (a temporary file renamed over the old one)."""
    path = Path(path) if path is not None else (config.path or models_file_path())
    text = dumps_models(config)
    parse_models_toml(text, path)  # never write a file the next start would refuse
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".models.", suffix=".toml", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def parse_option_value(backend: str, text: str) -> tuple[str, OptionValue]:
    """``name=value`` from the command line, typed as the backend's option wants."""
    name, sep, raw = text.partition("=")
    name = name.strip()
    if not sep or not name:
        raise ModelsFileError(f"--option takes NAME=VALUE, got {text!r}")
    types: Mapping[str, type] = OPTION_TYPES.get(backend, {})
    want = types.get(name)
    if want is None:
        raise ModelsFileError(
            f"--option {name}: unknown option for a {backend} model; "
            f"it takes {', '.join(sorted(types))}"
        )
    raw = raw.strip()
    try:
        if want is bool:
            if raw.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError
            return name, raw.lower() in ("true", "1", "yes")
        return name, want(raw)
    except ValueError:
        what = {int: "a whole number", float: "a number", bool: "true or false"}.get(
            want, "a string"
        )
        raise ModelsFileError(f"--option {name}: {raw!r} is not {what}") from None
