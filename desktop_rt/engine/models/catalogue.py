"""The models file (``<config dir>/models.toml``): which models the server may route to.

It holds ``global_concurrency_limit``, ``max_loaded_models``, ``wait_timeout``, ``load_timeout``,
an ``[aliases]`` table and one ``[models.ID]`` table per model: its ``backend`` (a kind: whisper,
llama, command), ``ttl``, ``concurrency_limit``, ``paths`` or ``cmd``, ``options`` (an example
is in docs/design/models.md). The embedded default (``whisper-base``) is always present; its
table may set ``ttl``, ``concurrency_limit`` and ``options`` but not its files.
:func:`load_models_file` validates everything and raises :class:`ModelsFileError` naming the
file, line and key; :func:`save_models_file` writes the file back atomically (comments are lost).
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

import tomllib

from desktop_rt.engine.models.aliases import AliasMap, read_aliases
from desktop_rt.engine.models.catalogue_read import (
    Where,
    read_entry,
    read_number,
    read_table,
    type_word,
)
from desktop_rt.engine.models.catalogue_write import dumps_models
from desktop_rt.engine.models.entry import (
    EMBEDDED_ENTRY,
    ModelEntry,
    ModelsFileError,
    ModelSource,
    OptionValue,
)
from desktop_rt.engine.models.kinds import kind_named
from desktop_rt.paths import config_dir

__all__ = [
    "MODELS_FILE",
    "DEFAULT_WAIT_TIMEOUT",
    "DEFAULT_LOAD_TIMEOUT",
    "ModelsFileError",
    "ModelSource",
    "ModelEntry",
    "ModelsConfig",
    "EMBEDDED_ENTRY",
    "OptionValue",
    "models_file_path",
    "new_model_id",
    "parse_models_toml",
    "load_models_file",
    "dumps_models",
    "save_models_file",
    "parse_option_value",
]

MODELS_FILE = "models.toml"
_TOP_KEYS = {
    "global_concurrency_limit",
    "max_loaded_models",
    "wait_timeout",
    "load_timeout",
    "aliases",
    "models",
}
DEFAULT_WAIT_TIMEOUT = 120.0
DEFAULT_LOAD_TIMEOUT = 600.0


@dataclass(frozen=True)
class ModelsConfig:
    entries: tuple[ModelEntry, ...] = (EMBEDDED_ENTRY,)
    global_concurrency_limit: int = 0
    """Websocket sessions at once over all models; 0 means no limit."""
    max_loaded_models: int = 1
    """Models loaded at once; loading one more first unloads an idle one, or waits for one."""
    wait_timeout: float = DEFAULT_WAIT_TIMEOUT
    """Seconds a session waits for its model (a load, a swap, a busy model); then an error."""
    load_timeout: float = DEFAULT_LOAD_TIMEOUT
    """Seconds a model may take to load before its load counts as failed."""
    aliases: tuple[tuple[str, str], ...] = ()
    """The ``[aliases]`` table: (name, model id); an empty id turns a built-in name off."""
    path: Path | None = field(default=None, compare=False)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(e.id for e in self.entries)

    def alias_map(self, default_id: str | None = None) -> AliasMap:
        """Every name served; OpenAI's names go to ``default_id`` (default: the embedded model)."""
        ids = self.ids
        embedded = next((e.id for e in self.entries if e.embedded), None)
        return AliasMap.build(ids, self.aliases, default_id or embedded or next(iter(ids), None))

    def get(self, model_id: str) -> ModelEntry | None:
        return next((e for e in self.entries if e.id == model_id), None)

    def with_entry(self, entry: ModelEntry) -> ModelsConfig:
        """Add ``entry``, or replace the one with its id (keeping its place)."""
        _check_entry(entry)
        if entry.id in dict(self.aliases):
            raise ModelsFileError(
                f"'{entry.id}' is an alias in the models file; give the model another id, or "
                f"remove the alias from [aliases] first."
            )
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
        entries = tuple(e for e in self.entries if e.id != model_id)
        aliases = tuple((name, target) for name, target in self.aliases if target != model_id)
        return replace(self, entries=entries, aliases=aliases)  # its aliases go with it


def models_file_path() -> Path:
    return config_dir() / MODELS_FILE


def new_model_id(name: str, taken: tuple[str, ...]) -> str:
    """A valid model id made from ``name`` (a file's stem, a folder's name) not in ``taken``."""
    base = re.sub(r"[^A-Za-z0-9._:-]+", "-", name).strip("-.") or "model"
    base = base[:100]
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    return candidate


def _seconds(where: Where, data: dict[str, object], key: str, default: float) -> float:
    value = data.get(key, default)
    seconds = read_number(where, key, value, integer=False, what="a number of seconds, above 0")
    if seconds <= 0:
        raise where.error(key, f"must be a number of seconds, above 0, not {type_word(value)}")
    return float(seconds)


def _settings(where: Where, data: dict[str, object]) -> ModelsConfig:
    """The top-level keys (concurrency, loaded models, the two time bounds), without models."""
    global_limit = read_number(
        where,
        "global_concurrency_limit",
        data.get("global_concurrency_limit", 0),
        integer=True,
        what="a whole number of sessions (0: no limit)",
    )
    max_loaded = data.get("max_loaded_models", 1)
    if isinstance(max_loaded, bool) or not isinstance(max_loaded, int) or max_loaded < 1:
        raise where.error(
            "max_loaded_models", f"must be a whole number, 1 or more, not {type_word(max_loaded)}"
        )
    return ModelsConfig(
        entries=(),
        global_concurrency_limit=int(global_limit),
        max_loaded_models=max_loaded,
        wait_timeout=_seconds(where, data, "wait_timeout", DEFAULT_WAIT_TIMEOUT),
        load_timeout=_seconds(where, data, "load_timeout", DEFAULT_LOAD_TIMEOUT),
    )


def parse_models_toml(text: str, path: Path | None = None) -> ModelsConfig:
    """Read and validate the text of a models file."""
    where = Where(path, text)
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
    settings = _settings(where, data)
    models = read_table(where, "models", data.get("models", {}))
    entries = [read_entry(where, model_id, raw) for model_id, raw in models.items()]
    if not any(e.embedded for e in entries):
        entries.insert(0, EMBEDDED_ENTRY)
    ids = tuple(e.id for e in entries)
    aliases = read_aliases(where, data.get("aliases", {}), ids)
    return replace(settings, entries=tuple(entries), aliases=aliases, path=path)


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


def _check_entry(entry: ModelEntry) -> None:
    """Validate an entry built in code (``models add``) by the same rules as the file."""
    parse_models_toml(dumps_models(ModelsConfig((entry,))), None)


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
    kind = kind_named(backend)
    types = kind.options if kind is not None else {}
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
        value: OptionValue = want(raw)
        return name, value
    except ValueError:
        what = {int: "a whole number", float: "a number", bool: "true or false"}.get(
            want, "a string"
        )
        raise ModelsFileError(f"--option {name}: {raw!r} is not {what}") from None
