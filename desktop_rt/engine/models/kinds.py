"""Turn what a user typed (``--model``: an id or a path) into a loaded :class:`AsrBackend`.

Each backend kind registers a :class:`BackendKind` that says which specs it claims, which
models.toml ``backend`` it is, and how to load them with options; there is no chain of
``if model_type == ...``. The command line (:func:`open_backend`) and the router's entries
(:func:`load_entry`) load through the same kinds. The embedded default is the id
``whisper-base`` (and what ``None`` means). A GGUF text model (``*.gguf``, or any file that
starts with the GGUF magic) takes its audio projector from ``mmproj`` (``--mmproj``), or from the
one ``*mmproj*.gguf`` beside it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from desktop_rt.engine.asr.backend import AsrBackend
from desktop_rt.engine.asr.llama.gguf_check import is_gguf
from desktop_rt.engine.models.embedded import DEFAULT_MODEL_ID, ensure_default_model
from desktop_rt.errors import ModelFormatError, ModelMissingError

if TYPE_CHECKING:
    from desktop_rt.engine.models.catalogue import ModelEntry

__all__ = ["BackendKind", "KINDS", "open_backend", "kind_for_entry", "load_entry", "describe_model"]

ProgressFn = Callable[[int, int], None]


@dataclass(frozen=True)
class BackendKind:
    name: str
    backend: str  # the models.toml ``backend`` it loads ("whisper", "llama")
    claims: Callable[[str], bool]
    load: Callable[..., AsrBackend]
    takes_mmproj: bool = False  # load() accepts mmproj=


def _options(options_class, values: Mapping[str, object]):
    """``options_class`` from ``values``, ignoring what it does not take (``language`` is a
    session setting, not a backend option)."""
    known = {f.name for f in dataclasses.fields(options_class)}
    return options_class(**{k: v for k, v in values.items() if k in known})


def _load_whisper_folder(
    spec: str,
    *,
    options: Mapping[str, object] = {},
    progress: ProgressFn | None = None,
    name: str | None = None,
) -> AsrBackend:
    from desktop_rt.engine.asr.whisper import WhisperBackend, WhisperOptions

    return WhisperBackend(Path(spec), _options(WhisperOptions, options), name=name)


def _load_embedded(
    spec: str,
    *,
    options: Mapping[str, object] = {},
    progress: ProgressFn | None = None,
    name: str | None = None,
) -> AsrBackend:
    folder = ensure_default_model(progress=progress)
    return _load_whisper_folder(str(folder), options=options, name=name or DEFAULT_MODEL_ID)


def _load_gguf(
    spec: str,
    *,
    options: Mapping[str, object] = {},
    progress: ProgressFn | None = None,
    name: str | None = None,
    mmproj: str | None = None,
) -> AsrBackend:
    from desktop_rt.engine.asr.llama.backend import LlamaAsrBackend, LlamaOptions

    return LlamaAsrBackend(spec, mmproj, _options(LlamaOptions, options), name=name)


def _is_gguf_spec(spec: str) -> bool:
    return spec.lower().endswith(".gguf") or (Path(spec).is_file() and is_gguf(spec))


KINDS: list[BackendKind] = [
    BackendKind("embedded", "whisper", lambda s: s == DEFAULT_MODEL_ID, _load_embedded),
    BackendKind("whisper", "whisper", lambda s: Path(s).is_dir(), _load_whisper_folder),
    BackendKind("gguf", "llama", _is_gguf_spec, _load_gguf, takes_mmproj=True),
]


def kind_for_entry(entry: ModelEntry) -> BackendKind:
    """The kind that loads a models.toml entry; ValueError for one not loaded in this process."""
    if entry.embedded:
        return KINDS[0]
    for kind in KINDS[1:]:
        if kind.backend == entry.backend:
            return kind
    raise ValueError(f"{entry.id} is a {entry.backend} model, not one loaded in this process")


def load_entry(entry: ModelEntry) -> AsrBackend:
    """Load a models.toml entry (``whisper`` or ``llama``) with its options, named by its id."""
    kind = kind_for_entry(entry)
    extra = {"mmproj": entry.mmproj} if kind.takes_mmproj else {}
    return kind.load(
        entry.model_path or DEFAULT_MODEL_ID, options=dict(entry.options), name=entry.id, **extra
    )


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
    for kind in KINDS:
        if kind.claims(spec):
            if mmproj and not kind.takes_mmproj:
                raise ModelFormatError(
                    f"--mmproj goes with a GGUF speech model, but {spec} is a {kind.name} model. "
                    f"Drop --mmproj, or give the GGUF text model with --model."
                )
            extra = {"mmproj": mmproj} if kind.takes_mmproj else {}
            options = {"threads": threads} if threads else {}
            return kind.load(spec, options=options, progress=progress, **extra)
    if Path(spec).exists():
        raise ModelMissingError(
            f"{spec} is not a model desktop-rt can load: give a CTranslate2 Whisper model folder "
            f"(model.bin, config.json, tokenizer.json), or a GGUF speech model "
            f"(--model TEXT.gguf --mmproj MMPROJ.gguf)."
        )
    raise ModelMissingError(
        f"Unknown model '{spec}'. Give a model folder path, a .gguf file, or the id '{DEFAULT_MODEL_ID}'."
    )


def describe_model(spec: str | None) -> str:
    """The id clients see for ``spec``."""
    spec = spec or DEFAULT_MODEL_ID
    return spec if spec == DEFAULT_MODEL_ID else Path(spec).name
