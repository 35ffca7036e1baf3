"""One entry of the models file: :class:`ModelEntry`, plain frozen data.

What an entry's ``backend`` means (its options, files, loading, state) is decided by its kind
(:mod:`~desktop_rt.engine.models.kinds`), never here. :data:`EMBEDDED_ENTRY` is the embedded
default model, always present.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from desktop_rt.engine.models.embedded import DEFAULT_MODEL_ID
from desktop_rt.errors import DesktopRtError

__all__ = ["OptionValue", "ModelsFileError", "ModelSource", "ModelEntry", "EMBEDDED_ENTRY"]

OptionValue = str | int | float | bool


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
    """One ``[models.ID]`` table. ``backend`` names its kind (``whisper``, ``llama``, ``command``)."""

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


EMBEDDED_ENTRY = ModelEntry(DEFAULT_MODEL_ID, "whisper", embedded=True)
