"""The kinds whose models load into this process: ``whisper`` (CTranslate2) and ``llama`` (GGUF).

Their entries name files (``paths.model``, and for llama ``paths.mmproj``); they take no ``cmd``
or ``env``. The embedded default is a ``whisper`` entry without files: :class:`WhisperKind`
assembles it on first use. A GGUF text model without ``mmproj`` takes the one
``*mmproj*.gguf`` beside it. Both run in an
:class:`~desktop_rt.engine.models.runtimes.InProcessRuntime`.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_rt.engine.asr.ct2_folder import check_ctranslate2_dir
from desktop_rt.engine.asr.llama.gguf_check import is_gguf
from desktop_rt.engine.models.embedded import (
    DEFAULT_MODEL_ID,
    EMBEDDED_WHISPER_BASE,
    default_model_installed,
    ensure_default_model,
)
from desktop_rt.engine.models.entry import ModelEntry, ModelsFileError
from desktop_rt.engine.models.kind_protocol import (
    EntryFieldError,
    EntryReport,
    ProgressFn,
    checked_state,
)
from desktop_rt.errors import ModelMissingError

if TYPE_CHECKING:
    from desktop_rt.engine.asr.backend import AsrBackend
    from desktop_rt.engine.asr.streaming import StreamingConfig
    from desktop_rt.engine.asr.worker import WorkerConfig
    from desktop_rt.engine.models.router_types import ModelRuntime

__all__ = ["WhisperKind", "LlamaKind"]


def _options(options_class: Any, values: Mapping[str, object]) -> Any:
    """``options_class`` (a dataclass) from ``values``, ignoring what it does not take
    (``language`` is a session setting, not a backend option)."""
    known = {f.name for f in dataclasses.fields(options_class)}
    return options_class(**{k: v for k, v in values.items() if k in known})


def _path_size(path: Path) -> int:
    try:
        if path.is_file():
            return path.stat().st_size
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    except OSError:
        return 0


class _LocalKind(ABC):
    """What the in-process kinds share: file entries, their report, their runtime."""

    name = ""
    options: Mapping[str, type] = {}
    in_process = True
    holds_memory = True
    takes_mmproj = False
    captions = False
    model_files = ""
    """What ``paths.model`` is, in words."""

    def validate(self, entry: ModelEntry) -> None:
        if not entry.embedded:
            if entry.cmd is not None:
                raise EntryFieldError(
                    "cmd", f"only command models have a cmd; this one is a {self.name} model"
                )
            if entry.model_path is None:
                raise EntryFieldError(
                    "paths", f'needs paths = {{ model = "..." }}: {self.model_files}'
                )
            if entry.mmproj is not None and not self.takes_mmproj:
                raise EntryFieldError("paths.mmproj", "only llama (GGUF) models take an mmproj")
        if entry.env:
            raise EntryFieldError("env", "only command models take env")

    @abstractmethod
    def check(self, entry: ModelEntry) -> None: ...

    def report(self, entry: ModelEntry) -> EntryReport:
        state, ready = checked_state(self.check, entry)
        paths = [Path(p) for p in (entry.model_path, entry.mmproj) if p]
        location = entry.model_path or ""
        if entry.mmproj:
            location = f"{location} + {entry.mmproj}"
        return EntryReport(
            entry,
            state,
            ready,
            captions=ready and self.captions,
            size=sum(_path_size(p) for p in paths),
            location=location,
            spec=entry.model_path or "",
        )

    def runtime(
        self, entry: ModelEntry, streaming: StreamingConfig, worker: WorkerConfig
    ) -> ModelRuntime:
        from desktop_rt.engine.models.kinds import entry_loader
        from desktop_rt.engine.models.runtimes import InProcessRuntime, entry_streaming

        return InProcessRuntime(
            entry.id,
            entry_loader(entry),
            streaming=entry_streaming(entry, streaming),
            worker=worker,
        )


class WhisperKind(_LocalKind):
    """A CTranslate2 Whisper model folder (faster-whisper), or the embedded default."""

    name = "whisper"
    options = {
        "threads": int,
        "compute_type": str,
        "beam_size": int,
        "device": str,
        "language": str,
        "context": str,
        "context_pad_seconds": float,
        "min_context_seconds": float,
    }
    captions = True
    model_files = "the CTranslate2 model folder"

    def claims(self, spec: str) -> bool:
        return spec == DEFAULT_MODEL_ID or Path(spec).is_dir()

    def check(self, entry: ModelEntry) -> None:
        if not entry.embedded:  # the embedded model is assembled from its packages on first use
            check_ctranslate2_dir(Path(entry.model_path or ""))

    def report(self, entry: ModelEntry) -> EntryReport:
        if not entry.embedded:
            return super().report(entry)
        installed = default_model_installed()
        return EntryReport(
            entry,
            "installed" if installed else "assembled from its packages on first use",
            ready=True,
            captions=True,
            size=EMBEDDED_WHISPER_BASE.size,
            location="(embedded)",
            spec=DEFAULT_MODEL_ID,
        )

    def open(
        self,
        spec: str,
        *,
        options: Mapping[str, object],
        progress: ProgressFn | None = None,
        name: str | None = None,
        mmproj: str | None = None,
    ) -> AsrBackend:
        from desktop_rt.engine.asr.whisper import WhisperBackend, WhisperOptions

        if spec == DEFAULT_MODEL_ID:
            folder = ensure_default_model(progress=progress, check_later=True)
            name = name or DEFAULT_MODEL_ID
        else:
            folder = Path(spec)
        return WhisperBackend(folder, _options(WhisperOptions, options), name=name)

    def download_paths(self, folder: Path, names: Sequence[str]) -> tuple[str, str | None]:
        return str(folder), None


class LlamaKind(_LocalKind):
    """A GGUF speech model through llama.cpp's mtmd: a text model and its audio projector."""

    name = "llama"
    options = {
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
    }
    takes_mmproj = True
    model_files = "the GGUF text model"

    def claims(self, spec: str) -> bool:
        return spec.lower().endswith(".gguf") or (Path(spec).is_file() and is_gguf(spec))

    def check(self, entry: ModelEntry) -> None:
        missing = [p for p in (entry.model_path, entry.mmproj) if p and not Path(p).is_file()]
        if missing:
            raise ModelMissingError(", ".join(missing))

    def open(
        self,
        spec: str,
        *,
        options: Mapping[str, object],
        progress: ProgressFn | None = None,
        name: str | None = None,
        mmproj: str | None = None,
    ) -> AsrBackend:
        from desktop_rt.engine.asr.llama.backend import LlamaAsrBackend, LlamaOptions

        return LlamaAsrBackend(spec, mmproj, _options(LlamaOptions, options), name=name)

    def download_paths(self, folder: Path, names: Sequence[str]) -> tuple[str, str | None]:
        ggufs = [n for n in names if n.lower().endswith(".gguf")]
        texts = [n for n in ggufs if "mmproj" not in n.lower()]
        projectors = [n for n in ggufs if "mmproj" in n.lower()]
        if len(texts) != 1:
            raise ModelsFileError(
                f"Downloaded {', '.join(ggufs) or 'no .gguf'}: name exactly one GGUF text model "
                f"(and its mmproj) with --file, then add it with `desktop-rt models add`."
            )
        return str(folder / texts[0]), str(folder / projectors[0]) if projectors else None
