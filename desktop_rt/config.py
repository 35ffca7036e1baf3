"""Typed application settings, saved as JSON in the config dir.

:class:`Settings` is a frozen dataclass of small frozen groups; every component reads its own
group. Change settings with :func:`dataclasses.replace`, persist them with :func:`save_settings`
(atomic: a temporary sibling renamed over the file). :func:`load_settings` never raises for a
bad file: missing gives the defaults, corrupt gives the defaults plus a warning (the file is kept
as ``settings.json.corrupt``). Older files are migrated step by step (:data:`MIGRATIONS`);
unknown keys and values of the wrong type are dropped with a warning.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import secrets
import time
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal, get_args, get_type_hints

from desktop_rt.config_migrations import MIGRATIONS
from desktop_rt.dictation.settings import DictationSettings
from desktop_rt.engine.audio.vad import TurnDetectorSettings
from desktop_rt.engine.models.embedded import DEFAULT_MODEL_ID
from desktop_rt.errors import DesktopRtError
from desktop_rt.paths import config_dir

__all__ = [
    "SCHEMA_VERSION",
    "SETTINGS_FILE",
    "Mode",
    "PUSH_TO_TALK",
    "HANDS_FREE",
    "SourceKind",
    "MICROPHONE",
    "SYSTEM_AUDIO",
    "MEETING",
    "APPLICATION",
    "Theme",
    "THEMES",
    "AudioSettings",
    "AppearanceSettings",
    "CaptionSettings",
    "OverlaySettings",
    "TranscriptionSettings",
    "ServerSettings",
    "ShareSettings",
    "WindowSettings",
    "Settings",
    "LoadedSettings",
    "SettingsError",
    "settings_path",
    "load_settings",
    "save_settings",
    "settings_to_dict",
    "settings_from_dict",
    "MIGRATIONS",
]

log = logging.getLogger(__name__)

SCHEMA_VERSION = 3
SETTINGS_FILE = "settings.json"

Mode = Literal["push_to_talk", "hands_free"]
PUSH_TO_TALK: Mode = "push_to_talk"
HANDS_FREE: Mode = "hands_free"

SourceKind = Literal["microphone", "system", "meeting", "application"]
MICROPHONE: SourceKind = "microphone"
SYSTEM_AUDIO: SourceKind = "system"
"""What the computer plays (a loopback of an output)."""
MEETING: SourceKind = "meeting"
"""The microphone ("You") and system audio ("Others") at once."""
APPLICATION: SourceKind = "application"
"""One application's sound (Linux: PulseAudio or PipeWire)."""

Theme = Literal["system", "light", "dark", "high_contrast"]
THEMES: tuple[Theme, ...] = get_args(Theme)


class SettingsError(DesktopRtError):
    """Settings could not be saved."""


@dataclass(frozen=True)
class AudioSettings:
    input_device: str | None = None
    """Device name as sounddevice lists it; None: the system default input."""
    mode: Mode = PUSH_TO_TALK
    source: SourceKind = MICROPHONE
    """What is captioned: the microphone, system audio, both (meeting mode) or one application."""
    output_device: str | None = None
    """The output whose sound is captured, as soundcard names it; None: the default output."""
    application: str | None = None
    """The application captured (source "application", or meeting's "Others"), by its name."""


@dataclass(frozen=True)
class CaptionSettings:
    font_size: int = 20
    shade_uncertain: bool = True
    """Show words the recognizer was unsure of lighter, with a dotted underline."""
    uncertain_below: float = 0.5
    """A word is unsure when its probability is below this."""


@dataclass(frozen=True)
class OverlaySettings:
    enabled: bool = False
    font_size: int = 28
    opacity: float = 0.75
    geometry: str | None = None
    """Saved overlay geometry (hex of Qt's saveGeometry)."""


@dataclass(frozen=True)
class AppearanceSettings:
    theme: Theme = "system"
    """"system" follows the desktop's light or dark palette; "high_contrast" is yellow on black."""
    font_family: str | None = None
    """Font of the captions and the overlay; None: the system's."""


@dataclass(frozen=True)
class TranscriptionSettings:
    language: str | None = None
    """ISO code such as "en"; None: detect."""
    model_id: str = DEFAULT_MODEL_ID
    """The embedded model id, or a local model folder (absolute path)."""
    model_folders: tuple[str, ...] = ()
    """Local model folders the user added in the models dialog."""
    translate: bool = False
    """Show an English translation beneath the captions (docs/design/translation.md)."""


@dataclass(frozen=True)
class ServerSettings:
    port: int = 8777
    api_key: str | None = None
    """None: no key required (the server only listens on 127.0.0.1)."""
    allowed_origins: tuple[str, ...] = ()


@dataclass(frozen=True)
class ShareSettings:
    """The caption page for other screens, off by default (docs/design/captions_page.md).
    ``port``: on every interface; ``token``: the viewers' secret (not the API key)."""

    enabled: bool = False
    port: int = 8778
    token: str | None = None


@dataclass(frozen=True)
class WindowSettings:
    geometry: str | None = None
    """Main window geometry (hex of Qt's saveGeometry)."""
    history_splitter: str | None = None


@dataclass(frozen=True)
class Settings:
    audio: AudioSettings = field(default_factory=AudioSettings)
    vad: TurnDetectorSettings = field(default_factory=TurnDetectorSettings)
    """Hands-free turn detection, the engine's own settings type."""
    captions: CaptionSettings = field(default_factory=CaptionSettings)
    overlay: OverlaySettings = field(default_factory=OverlaySettings)
    appearance: AppearanceSettings = field(default_factory=AppearanceSettings)
    transcription: TranscriptionSettings = field(default_factory=TranscriptionSettings)
    server: ServerSettings = field(default_factory=ServerSettings)
    window: WindowSettings = field(default_factory=WindowSettings)
    share: ShareSettings = field(default_factory=ShareSettings)
    dictation: DictationSettings = field(default_factory=DictationSettings)

    def with_group(self, **groups: Any) -> Settings:
        """A copy with whole groups replaced: ``settings.with_group(captions=CaptionSettings(...))``."""
        return replace(self, **groups)

    @staticmethod
    def new_api_key() -> str:
        return "drt-" + secrets.token_urlsafe(24)


@dataclass(frozen=True)
class LoadedSettings:
    settings: Settings
    warnings: tuple[str, ...] = ()
    path: Path | None = None


# --- bounds -----------------------------------------------------------------------------------

_BOUNDS: dict[tuple[str, str], tuple[float, float]] = {
    ("vad", "threshold"): (0.05, 0.95),
    ("vad", "silence_duration_ms"): (100, 10_000),
    ("vad", "prefix_padding_ms"): (0, 2_000),
    ("captions", "font_size"): (8, 96),
    ("captions", "uncertain_below"): (0.05, 0.95),
    ("overlay", "font_size"): (8, 120),
    ("overlay", "opacity"): (0.1, 1.0),
    ("server", "port"): (0, 65_535),
    ("share", "port"): (0, 65_535),
}


# --- dict <-> dataclass -----------------------------------------------------------------------


def settings_to_dict(settings: Settings) -> dict[str, Any]:
    doc: dict[str, Any] = {"version": SCHEMA_VERSION}
    for group in fields(settings):
        values = dataclasses.asdict(getattr(settings, group.name))
        doc[group.name] = {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}
    return doc


def _coerce(value: Any, hint: Any, where: str, warnings: list[str]) -> tuple[bool, Any]:
    """(ok, value) for ``value`` read against the annotation ``hint``."""
    origin = getattr(hint, "__origin__", None)
    args = get_args(hint)
    if origin is Literal:
        return (value in args, value)
    if hint is bool:
        return (isinstance(value, bool), value)
    if hint is int:
        return (isinstance(value, int) and not isinstance(value, bool), value)
    if hint is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return (ok, float(value) if ok else value)
    if hint is str:
        return (isinstance(value, str), value)
    if origin is tuple:
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        return (ok, tuple(value) if ok else value)
    if type(None) in args:  # Optional[X]
        if value is None:
            return (True, None)
        inner = [a for a in args if a is not type(None)]
        return _coerce(value, inner[0], where, warnings)
    return (False, value)


def _group_from_dict(cls: type, data: Any, group: str, warnings: list[str]) -> Any:
    default = cls()
    if not isinstance(data, dict):
        warnings.append(f"settings group '{group}' is not an object; using defaults")
        return default
    hints = get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in fields(cls):
        if f.name not in data:
            continue
        ok, value = _coerce(data[f.name], hints[f.name], f"{group}.{f.name}", warnings)
        if not ok:
            warnings.append(
                f"setting {group}.{f.name} has an invalid value {data[f.name]!r}; using the default"
            )
            continue
        bounds = _BOUNDS.get((group, f.name))
        if bounds is not None and not bounds[0] <= value <= bounds[1]:
            clamped = type(value)(min(max(value, bounds[0]), bounds[1]))
            warnings.append(f"setting {group}.{f.name}={value} is out of range; using {clamped}")
            value = clamped
        values[f.name] = value
    for key in data:
        if key not in {f.name for f in fields(cls)}:
            warnings.append(f"unknown setting {group}.{key} ignored")
    return replace(default, **values)


def settings_from_dict(doc: dict[str, Any]) -> tuple[Settings, list[str]]:
    """Settings from a (possibly old) JSON document; returns the warnings too."""
    warnings: list[str] = []
    version = doc.get("version", 1)
    if not isinstance(version, int) or version < 1:
        warnings.append(f"settings version {version!r} is not valid; reading it as version 1")
        version = 1
    if version > SCHEMA_VERSION:
        warnings.append(
            f"settings were saved by a newer desktop-rt (version {version}); reading what this one knows"
        )
    while version < SCHEMA_VERSION:
        doc = MIGRATIONS[version](doc)
        version += 1
    groups = {}
    hints = get_type_hints(Settings)
    for f in fields(Settings):
        if f.name in doc:
            groups[f.name] = _group_from_dict(hints[f.name], doc[f.name], f.name, warnings)
    for key in doc:
        if key != "version" and key not in groups:
            warnings.append(f"unknown setting '{key}' ignored")
    return Settings(**groups), warnings


# --- files ------------------------------------------------------------------------------------


def settings_path() -> Path:
    return config_dir() / SETTINGS_FILE


def _keep_damaged(path: Path) -> str:
    """Move a damaged settings file aside (never over an earlier copy); a sentence for people."""
    backup = path.with_name(path.name + ".corrupt")
    if backup.exists():
        backup = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        os.replace(path, backup)
    except OSError:
        return ""
    return f" The broken file was kept as {backup.name}."


def load_settings(path: Path | None = None) -> LoadedSettings:
    """The saved settings, or the defaults; never raises for a missing or broken file.

    A file that is not UTF-8 JSON holding an object is moved aside (``settings.json.corrupt``)
    before the defaults are used, so the next save never overwrites the only copy.
    """
    path = path or settings_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return LoadedSettings(Settings(), (), path)
    except OSError as exc:
        message = f"Could not read the settings file {path} ({exc}); using the default settings."
        log.warning(message)
        return LoadedSettings(Settings(), (message,), path)
    try:
        doc = json.loads(raw.decode("utf-8"))
        if not isinstance(doc, dict):
            raise ValueError("the file does not hold a JSON object")
    except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        kept = _keep_damaged(path)
        message = f"The settings file {path} is damaged ({exc}); using the default settings.{kept}"
        log.warning(message)
        return LoadedSettings(Settings(), (message,), path)
    settings, warnings = settings_from_dict(doc)
    for warning in warnings:
        log.warning("%s: %s", path, warning)
    return LoadedSettings(settings, tuple(warnings), path)


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    """Write atomically (temporary sibling, fsync, rename). Raises :class:`SettingsError`."""
    path = path or settings_path()
    data = json.dumps(settings_to_dict(settings), indent=2, ensure_ascii=False) + "\n"
    temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(temp, "w", encoding="utf-8") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise SettingsError(
            f"Could not save the settings to {path}: {exc.strerror or exc}. "
            "Check that the folder is writable and the disk has space."
        ) from exc
    return path
