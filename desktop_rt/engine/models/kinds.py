"""The registry of backend kinds, and every question asked of "which kind is this".

:data:`KINDS` holds one :class:`~desktop_rt.engine.models.kind_protocol.BackendKind` per
models.toml ``backend`` (``whisper``, ``llama``, ``command``, ``remote``). An entry's kind is
:func:`kind_of`; what a ``--model`` spec is, :func:`claiming_kind` (the embedded id ``whisper-base``
and ``None`` are the whisper kind). The command line (:func:`open_backend`), the router's entries
(:func:`entry_loader`), ``models list`` and the Models dialog (:func:`entry_report`) all go
through these kinds; nothing else compares ``backend`` strings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from desktop_rt.engine.models.command_kind import CommandKind
from desktop_rt.engine.models.embedded import DEFAULT_MODEL_ID
from desktop_rt.engine.models.entry import ModelEntry, ModelsFileError
from desktop_rt.engine.models.kind_protocol import BackendKind, EntryReport, ProgressFn
from desktop_rt.engine.models.local_kinds import LlamaKind, WhisperKind
from desktop_rt.engine.models.remote_kind import RemoteKind
from desktop_rt.errors import ModelFormatError, ModelMissingError

if TYPE_CHECKING:
    from desktop_rt.engine.asr.backend import AsrBackend

__all__ = [
    "BackendKind",
    "EntryReport",
    "WHISPER",
    "LLAMA",
    "COMMAND",
    "REMOTE",
    "KINDS",
    "BACKENDS",
    "kind_named",
    "kind_of",
    "claiming_kind",
    "kind_for_download",
    "served_entry",
    "local_entry",
    "entry_report",
    "entry_loader",
    "load_entry",
    "open_backend",
    "describe_model",
]

WHISPER: BackendKind = WhisperKind()
LLAMA: BackendKind = LlamaKind()
COMMAND: BackendKind = CommandKind()
REMOTE: BackendKind = RemoteKind()
KINDS: tuple[BackendKind, ...] = (WHISPER, LLAMA, COMMAND, REMOTE)
BACKENDS = tuple(kind.name for kind in KINDS)
"""The models.toml ``backend`` values, in the order messages list them."""


def kind_named(backend: str) -> BackendKind | None:
    """The kind of a models.toml ``backend`` value; None for one that is not a kind."""
    return next((kind for kind in KINDS if kind.name == backend), None)


def kind_of(entry: ModelEntry) -> BackendKind:
    """``entry``'s kind (entries are validated when read, so it has one)."""
    kind = kind_named(entry.backend)
    if kind is None:
        raise ModelsFileError(
            f"{entry.id} has backend {entry.backend!r}; it must be one of "
            f"{', '.join(repr(b) for b in BACKENDS)}"
        )
    return kind


def claiming_kind(spec: str) -> BackendKind | None:
    """The first kind that claims ``spec`` (a model folder or file, or the embedded id)."""
    return next((kind for kind in KINDS if kind.claims(spec)), None)


def kind_for_download(folder: Path, names: Sequence[str]) -> BackendKind:
    """The kind of files downloaded into ``folder``: one claiming a file (a GGUF), else the
    one claiming the folder (a CTranslate2 Whisper model)."""
    for spec in [*(str(folder / name) for name in names), str(folder)]:
        kind = claiming_kind(spec)
        if kind is not None:
            return kind
    raise ModelsFileError(f"{folder} holds no model desktop-rt can load.")


def served_entry(model_id: str) -> ModelEntry:
    """An entry for a model served by its name alone (``serve --model``, the captions model):
    the kind that claims the name (a ``.gguf`` file's), else whisper."""
    kind = claiming_kind(model_id) or WHISPER
    return ModelEntry(model_id, kind.name, embedded=model_id == DEFAULT_MODEL_ID)


def local_entry(model_id: str, path: Path, mmproj: Path | None = None) -> ModelEntry:
    """An entry for model files on this machine (a Whisper folder, or a GGUF file and its
    mmproj), after checking them; ModelsFileError or ModelError say what is wrong."""
    kind = claiming_kind(str(path)) if path.exists() else None
    if kind is None or not kind.in_process:
        raise ModelsFileError(f"{path} is neither a CTranslate2 Whisper folder nor a .gguf file.")
    if kind.takes_mmproj and mmproj is None:
        raise ModelsFileError(
            f"{path.name} is a GGUF model: it needs its audio projector (mmproj) file too."
        )
    if kind.takes_mmproj and mmproj is not None and not mmproj.is_file():
        raise ModelsFileError(f"The mmproj file {mmproj} does not exist.")
    projector = str(mmproj) if kind.takes_mmproj and mmproj is not None else None
    entry = ModelEntry(model_id, kind.name, str(path), projector)
    kind.check(entry)
    return entry


def entry_report(entry: ModelEntry) -> EntryReport:
    """``entry``'s state, size and location, for ``models list`` and the Models dialog."""
    return kind_of(entry).report(entry)


def entry_loader(entry: ModelEntry) -> Callable[[], AsrBackend]:
    """The function that loads ``entry``'s backend with its options, named by its id.

    Raises ValueError at once (not when a session asks) for a kind not loaded in this process.
    """
    kind = kind_of(entry)
    if not kind.in_process:
        raise ValueError(f"{entry.id} is a {entry.backend} model, not one loaded in this process")
    return lambda: kind.open(
        entry.model_path or DEFAULT_MODEL_ID,
        options=dict(entry.options),
        name=entry.id,
        mmproj=entry.mmproj,
    )


def load_entry(entry: ModelEntry) -> AsrBackend:
    """Load a models.toml entry (``whisper`` or ``llama``) with its options, named by its id."""
    return entry_loader(entry)()


def open_backend(
    spec: str | None,
    *,
    threads: int = 0,
    progress: ProgressFn | None = None,
    mmproj: str | None = None,
) -> AsrBackend:
    """Load the model ``spec`` names (``None``: the embedded default).

    ``mmproj`` is the audio projector of a GGUF speech model; other kinds refuse it.
    """
    spec = spec or DEFAULT_MODEL_ID
    kind = claiming_kind(spec)
    if kind is None:
        if Path(spec).exists():
            raise ModelMissingError(
                f"{spec} is not a model desktop-rt can load: give a CTranslate2 Whisper model "
                f"folder (model.bin, config.json, tokenizer.json), or a GGUF speech model "
                f"(--model TEXT.gguf --mmproj MMPROJ.gguf)."
            )
        raise ModelMissingError(
            f"Unknown model '{spec}'. Give a model folder path, a .gguf file, or the id "
            f"'{DEFAULT_MODEL_ID}'."
        )
    if mmproj and not kind.takes_mmproj:
        raise ModelFormatError(
            f"--mmproj goes with a GGUF speech model, but {spec} is a {kind.name} model. "
            f"Drop --mmproj, or give the GGUF text model with --model."
        )
    options = {"threads": threads} if threads else {}
    return kind.open(spec, options=options, progress=progress, mmproj=mmproj)


def describe_model(spec: str | None) -> str:
    """The id clients see for ``spec``."""
    spec = spec or DEFAULT_MODEL_ID
    return spec if spec == DEFAULT_MODEL_ID else Path(spec).name
