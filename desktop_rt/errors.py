"""The one exception root of desktop-rt, with small trees under it.

Messages are for people: they say what happened and what to do about it.
"""

from __future__ import annotations

__all__ = [
    "DesktopRtError",
    "ModelError",
    "ModelMissingError",
    "ModelCorruptError",
    "ModelFormatError",
    "ModelMismatchError",
    "DiskFullError",
    "AudioError",
    "AudioDecodeError",
]


class DesktopRtError(Exception):
    """Root of every error desktop-rt raises on purpose."""


class ModelError(DesktopRtError):
    """A model could not be found, assembled or loaded."""


class ModelMissingError(ModelError):
    """Files a model needs are absent."""


class ModelCorruptError(ModelError):
    """Model files exist but are damaged (wrong checksum, truncated, unreadable)."""


class ModelFormatError(ModelError):
    """A model file is not of the kind expected (not GGUF, a projector where a text model goes)."""


class ModelMismatchError(ModelError):
    """Files that must form a pair do not (an mmproj made for another text model)."""


class DiskFullError(ModelError):
    """There was no room to write model files."""


class AudioError(DesktopRtError):
    """Audio could not be read, decoded or captured."""


class AudioDecodeError(AudioError):
    """Bytes that should be audio are not (bad base64, odd length, unknown format)."""
