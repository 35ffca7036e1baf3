"""The ``command`` kind: an external realtime server that desktop-rt starts on demand.

Its entry holds a ``cmd`` with ``${PORT}`` (and optional ``env``), never ``paths``; nothing of it
loads into this process. Its runtime is a :class:`~desktop_rt.engine.models.proxy.CommandRuntime`,
and sessions on it are proxied to that server.
"""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

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

__all__ = ["CommandKind"]


class CommandKind:
    """An external server: ``cmd`` names the program and its arguments, ``${PORT}`` its port."""

    name = "command"
    options: Mapping[str, type] = {"upstream_model": str, "start_timeout": float}
    in_process = False
    holds_memory = True  # the server it starts runs on this machine
    takes_mmproj = False

    def claims(self, spec: str) -> bool:
        return False  # ``--model`` names files; a server is only ever a models.toml entry

    def validate(self, entry: ModelEntry) -> None:
        if entry.cmd is None:
            raise EntryFieldError(
                "", 'a command model needs cmd = "... --port ${PORT} ..." (the server to start)'
            )
        if "${PORT}" not in entry.cmd:
            raise EntryFieldError(
                "cmd", "must contain ${PORT}, where desktop-rt puts the port the server listens on"
            )
        if entry.model_path is not None or entry.mmproj is not None:
            raise EntryFieldError("paths", "a command model has no paths: put the files in its cmd")

    def check(self, entry: ModelEntry) -> None:
        argv = shlex.split(entry.cmd or "")
        program = argv[0] if argv else ""
        if not (shutil.which(program) or Path(program).is_file()):
            raise ModelMissingError(f"{program} not found")

    def report(self, entry: ModelEntry) -> EntryReport:
        state, ready = checked_state(self.check, entry)
        cmd = entry.cmd or ""
        return EntryReport(entry, state, ready, captions=False, size=0, location=cmd, spec=cmd)

    def open(
        self,
        spec: str,
        *,
        options: Mapping[str, object],
        progress: ProgressFn | None = None,
        name: str | None = None,
        mmproj: str | None = None,
    ) -> AsrBackend:
        raise ValueError(f"{name or spec} is a command model, not one loaded in this process")

    def runtime(
        self, entry: ModelEntry, streaming: StreamingConfig, worker: WorkerConfig
    ) -> ModelRuntime:
        from desktop_rt.engine.models.proxy import CommandRuntime

        return CommandRuntime(entry)

    def download_paths(self, folder: Path, names: Sequence[str]) -> tuple[str, str | None]:
        raise ModelsFileError(
            "A command model is not downloaded: add it with `desktop-rt models add --cmd ...`."
        )
