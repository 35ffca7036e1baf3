"""Settings files of older schema versions, brought forward one version at a time.

``MIGRATIONS[n]`` turns a version-``n`` document into a version-``n+1`` one; each step is
frozen history, so it writes the literal values of the version it produces (not constants
that a later version might rename).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["MIGRATIONS"]


def _migrate_v1(doc: dict[str, Any]) -> dict[str, Any]:
    """Version 1 (0.0.x previews) was flat: ``push_to_talk``, ``device``, ``font``, ``vad_*``."""
    old = dict(doc)
    new: dict[str, Any] = {"version": 2}
    groups: dict[str, dict[str, Any]] = {}

    def put(group: str, key: str, value: Any) -> None:
        groups.setdefault(group, {})[key] = value

    renames = {
        "device": ("audio", "input_device"),
        "font": ("captions", "font_size"),
        "vad_threshold": ("vad", "threshold"),
        "vad_silence_ms": ("vad", "silence_ms"),
        "vad_padding_ms": ("vad", "prefix_padding_ms"),
        "language": ("transcription", "language"),
        "model": ("transcription", "model_id"),
        "port": ("server", "port"),
        "api_key": ("server", "api_key"),
        "overlay": ("overlay", "enabled"),
        "geometry": ("window", "geometry"),
    }
    for key, (group, name) in renames.items():
        if key in old:
            put(group, name, old.pop(key))
    if "push_to_talk" in old:
        put("audio", "mode", "push_to_talk" if old.pop("push_to_talk") else "hands_free")
    old.pop("version", None)
    new.update(groups)
    new.update({k: v for k, v in old.items() if k not in new})  # unknown keys: reported later
    return new


def _migrate_v2(doc: dict[str, Any]) -> dict[str, Any]:
    """Version 2 named the pause that ends a turn ``vad.silence_ms``; now ``silence_duration_ms``
    (the name of the engine's :class:`TurnDetectorSettings` and of the protocol)."""
    new = {**doc, "version": 3}
    vad = doc.get("vad")
    if isinstance(vad, dict) and "silence_ms" in vad:
        vad = dict(vad)
        silence = vad.pop("silence_ms")
        vad.setdefault("silence_duration_ms", silence)
        new["vad"] = vad
    return new


MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    1: _migrate_v1,
    2: _migrate_v2,
}
"""``MIGRATIONS[n]`` turns a version-``n`` document into a version-``n+1`` one."""
