"""What a backend kind is: the :class:`BackendKind` protocol, and the :class:`EntryReport` it gives.

A kind is one value of a models.toml ``backend``. It alone decides what its entries hold
(:meth:`~BackendKind.validate`), whether their files are there (:meth:`~BackendKind.check`,
:meth:`~BackendKind.report`), how they load (:meth:`~BackendKind.open`) and what runs them
(:meth:`~BackendKind.runtime`). The registry of kinds is :mod:`~desktop_rt.engine.models.kinds`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from desktop_rt.engine.models.entry import ModelEntry
from desktop_rt.errors import ModelError

if TYPE_CHECKING:
    from desktop_rt.engine.asr.backend import AsrBackend
    from desktop_rt.engine.asr.streaming import StreamingConfig
    from desktop_rt.engine.asr.worker import WorkerConfig
    from desktop_rt.engine.models.router_types import ModelRuntime

__all__ = ["BackendKind", "EntryReport", "EntryFieldError", "ProgressFn", "checked_state"]

ProgressFn = Callable[[int, int], None]


class EntryFieldError(ValueError):
    """An entry's fields do not suit its kind. ``field`` is the models.toml key under the entry
    (``cmd``, ``paths``, ``paths.mmproj``, ``env``), or ``""`` for the entry as a whole."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field, self.message = field, message


@dataclass(frozen=True)
class EntryReport:
    """One entry's state, as ``desktop-rt models list`` and the Models dialog show it."""

    entry: ModelEntry
    state: str
    """In words: ``ready``, ``installed``, ``missing: ...``, ..."""
    ready: bool
    """Its files (or its program) are there: it can be loaded or started now."""
    captions: bool
    """The app's live captions can run on it."""
    size: int
    """Bytes of its files on disk (0: none, or unknown)."""
    location: str
    """Its files or command, in words."""
    spec: str
    """What names it on the command line (``--model``) and in the captions setting."""

    @property
    def id(self) -> str:
        return self.entry.id


class BackendKind(Protocol):
    """One models.toml ``backend``: the entries it takes, how they load, what state they are in."""

    @property
    def name(self) -> str:
        """Its models.toml ``backend`` value."""
        ...

    @property
    def options(self) -> Mapping[str, type]:
        """The ``options`` its entries take, with their types."""
        ...

    @property
    def in_process(self) -> bool:
        """Its models load into this process (else an external server runs them)."""
        ...

    @property
    def holds_memory(self) -> bool:
        """Its loaded models hold this machine's memory, so they count against
        ``max_loaded_models`` (a remote server's do not)."""
        ...

    @property
    def takes_mmproj(self) -> bool:
        """Its models take an audio projector file (``paths.mmproj``, ``--mmproj``)."""
        ...

    def claims(self, spec: str) -> bool:
        """Whether ``spec`` (what ``--model`` was given) is a model of this kind."""
        ...

    def validate(self, entry: ModelEntry) -> None:
        """Raise :class:`EntryFieldError` if ``entry``'s paths, cmd or env do not suit the kind."""
        ...

    def check(self, entry: ModelEntry) -> None:
        """Raise a :class:`~desktop_rt.errors.ModelError` if ``entry``'s files or program are absent."""
        ...

    def report(self, entry: ModelEntry) -> EntryReport:
        """``entry``'s state, size and location (reads the disk; never loads the model)."""
        ...

    def open(
        self,
        spec: str,
        *,
        options: Mapping[str, object],
        progress: ProgressFn | None = None,
        name: str | None = None,
        mmproj: str | None = None,
    ) -> AsrBackend:
        """Load the model ``spec`` names (ValueError for a kind not loaded in this process)."""
        ...

    def runtime(
        self, entry: ModelEntry, streaming: StreamingConfig, worker: WorkerConfig
    ) -> ModelRuntime:
        """An unstarted runtime that serves ``entry``'s sessions (the router starts it)."""
        ...

    def download_paths(self, folder: Path, names: Sequence[str]) -> tuple[str, str | None]:
        """The entry's ``model`` and ``mmproj`` among files downloaded into ``folder``."""
        ...


def checked_state(check: Callable[[ModelEntry], None], entry: ModelEntry) -> tuple[str, bool]:
    """``("ready", True)`` if ``check(entry)`` passes, else ``("missing: <why>", False)``."""
    try:
        check(entry)
    except ModelError as exc:
        return f"missing: {exc}", False
    return "ready", True
