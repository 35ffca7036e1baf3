"""The ``remote`` kind: a realtime transcription server elsewhere, proxied untouched.

Its entry holds only ``options``: ``url`` (``ws://`` or ``wss://``, required), ``api_key_env``
(the environment variable holding the server's API key), ``upstream_model`` (the name the
server knows the model by) and ``ca_file`` (PEM certificates to trust besides the system's,
such as another desktop-rt's self-signed one). No cmd, paths or env. Its runtime is a
:class:`~desktop_rt.engine.models.remote.RemoteRuntime`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

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

__all__ = ["RemoteKind"]


class RemoteKind:
    """A server reached at ``options.url``; see the module docstring."""

    name = "remote"
    options: Mapping[str, type] = {
        "url": str,
        "api_key_env": str,
        "upstream_model": str,
        "ca_file": str,
    }
    in_process = False
    holds_memory = False  # another machine holds the model
    takes_mmproj = False

    def claims(self, spec: str) -> bool:
        return False  # a remote server is only ever a models.toml entry

    def validate(self, entry: ModelEntry) -> None:
        if entry.cmd is not None or entry.env:
            raise EntryFieldError(
                "cmd" if entry.cmd is not None else "env",
                "a remote model has no cmd or env: it names its server in options.url",
            )
        if entry.model_path is not None or entry.mmproj is not None:
            raise EntryFieldError("paths", "a remote model has no paths: its server has the files")
        url = str(entry.option("url", ""))
        if not url:
            raise EntryFieldError(
                "", 'a remote model needs options = { url = "wss://host:port/v1/realtime" }'
            )
        parts = urlsplit(url)
        if parts.scheme not in ("ws", "wss") or not parts.hostname:
            raise EntryFieldError(
                "options.url", f"must be a ws:// or wss:// URL with a host, not {url!r}"
            )
        if parts.username or parts.password:
            raise EntryFieldError(
                "options.url", "must not hold credentials: name their variable in api_key_env"
            )

    def check(self, entry: ModelEntry) -> None:
        key_env = entry.option("api_key_env")
        if key_env and not os.environ.get(str(key_env)):
            raise ModelMissingError(f"the environment variable {key_env} (its API key) is not set")
        ca_file = entry.option("ca_file")
        if ca_file and not Path(str(ca_file)).is_file():
            raise ModelMissingError(f"its ca_file {ca_file} does not exist")

    def report(self, entry: ModelEntry) -> EntryReport:
        state, ready = checked_state(self.check, entry)
        url = str(entry.option("url", ""))
        return EntryReport(entry, state, ready, captions=False, size=0, location=url, spec=url)

    def open(
        self,
        spec: str,
        *,
        options: Mapping[str, object],
        progress: ProgressFn | None = None,
        name: str | None = None,
        mmproj: str | None = None,
    ) -> AsrBackend:
        raise ValueError(f"{name or spec} is a remote model, served by another machine")

    def runtime(
        self, entry: ModelEntry, streaming: StreamingConfig, worker: WorkerConfig
    ) -> ModelRuntime:
        from desktop_rt.engine.models.remote import RemoteRuntime

        return RemoteRuntime(entry)

    def download_paths(self, folder: Path, names: Sequence[str]) -> tuple[str, str | None]:
        raise ModelsFileError(
            "A remote model is not downloaded: add it with "
            "`desktop-rt models add ID --backend remote --option url=wss://...`."
        )
