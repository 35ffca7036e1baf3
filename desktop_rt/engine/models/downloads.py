"""Models from the Hugging Face hub: download with progress and resume, verify, install atomically.

:func:`download_model` asks the hub for each file's size and hash (:func:`hub_files`), fetches
what is missing into a staging folder ``<models dir>/.<id>.download`` with ``hf_hub_download``
(which resumes a partial file from where it stopped, and shows a progress bar), verifies every
file, then renames the folder to ``<models dir>/<id>``. Verification: the sha256 the user gave
(``--sha256 FILE=HEX``, kept in the models file), else the hub's sha256 for LFS files, else the
git blob hash for small files; the size always. A file that fails is deleted so the next run
fetches it again; files already verified in the staging folder are not fetched again (resume
across runs). Nothing appears under ``<models dir>/<id>`` until every file passed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop_rt.errors import DesktopRtError, ModelCorruptError, ModelError, ModelMissingError
from desktop_rt.paths import models_dir

__all__ = [
    "RemoteFile",
    "hub_files",
    "staging_dir",
    "verify_file",
    "pending_files",
    "install",
    "download_model",
    "progress_tqdm",
    "DOWNLOAD_STAMP",
]

DOWNLOAD_STAMP = ".desktop-rt-download.json"
_CHUNK = 1 << 20
_SKIP = (".gitattributes", "README.md", "LICENSE", "LICENSE.md", "LICENSE.txt")


@dataclass(frozen=True)
class RemoteFile:
    """A file to fetch, with what it must hash to (any of these may be unknown)."""

    name: str
    size: int | None = None
    sha256: str | None = None
    git_sha1: str | None = None


def hub_files(
    repo: str,
    revision: str | None = None,
    names: Sequence[str] | None = None,
    token: str | None = None,
) -> list[RemoteFile]:
    """The repo's files (``names``, or all but docs) with their sizes and hashes (network)."""
    from huggingface_hub import HfApi
    from huggingface_hub.hf_api import RepoFile

    api = HfApi(token=token)
    if not names:
        names = [
            n for n in api.list_repo_files(repo, revision=revision) if Path(n).name not in _SKIP
        ]
    found = {
        f.path: f
        for f in api.get_paths_info(repo, list(names), revision=revision)
        if isinstance(f, RepoFile)
    }
    missing = [n for n in names if n not in found]
    if missing:
        raise ModelMissingError(
            f"{repo} has no file {', '.join(missing)}; check the names with the hub's file list."
        )
    out = []
    for name in names:
        info = found[name]
        lfs = info.lfs
        out.append(
            RemoteFile(name, info.size, lfs.sha256 if lfs else None, None if lfs else info.blob_id)
        )
    return out


def staging_dir(model_id: str, root: Path | None = None) -> Path:
    return (root if root is not None else models_dir()) / f".{model_id}.download"


def _digests(path: Path) -> tuple[str, str]:
    sha256 = hashlib.sha256()
    blob = hashlib.sha1(f"blob {path.stat().st_size}\0".encode())  # git's object hash
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            sha256.update(chunk)
            blob.update(chunk)
    return sha256.hexdigest(), blob.hexdigest()


def verify_file(path: Path, remote: RemoteFile) -> str:
    """Check ``path`` against ``remote``; returns its sha256. Raises :class:`ModelCorruptError`."""
    if not path.is_file():
        raise ModelMissingError(f"{remote.name} was not downloaded ({path} is missing).")
    size = path.stat().st_size
    if remote.size is not None and size != remote.size:
        raise ModelCorruptError(
            f"{remote.name} has {size:,} bytes, the hub says {remote.size:,}: the download is incomplete or damaged."
        )
    sha256, git_sha1 = _digests(path)
    if remote.sha256 and sha256 != remote.sha256.lower():
        raise ModelCorruptError(
            f"{remote.name} has sha256 {sha256[:16]}..., expected {remote.sha256[:16]}...: it is damaged or "
            f"not the file that was asked for."
        )
    if remote.git_sha1 and git_sha1 != remote.git_sha1.lower():
        raise ModelCorruptError(
            f"{remote.name} does not match the hub's copy (git hash {git_sha1[:12]}... "
            f"instead of {remote.git_sha1[:12]}...)."
        )
    return sha256


def pending_files(staging: Path, remotes: Iterable[RemoteFile]) -> list[RemoteFile]:
    """What still has to be fetched: files absent from ``staging`` or failing verification.

    A failing file is deleted, so a fresh copy is fetched (the hub resumes only its own partial
    downloads, which it keeps aside until they are complete).
    """
    todo = []
    for remote in remotes:
        path = staging / remote.name
        try:
            verify_file(path, remote)
        except ModelMissingError:
            todo.append(remote)
        except ModelCorruptError:
            path.unlink()
            todo.append(remote)
    return todo


def install(
    staging: Path,
    target: Path,
    remotes: Sequence[RemoteFile],
    source: dict[str, str | None] | None = None,
) -> dict[str, str]:
    """Verify every file in ``staging``, then move it to ``target`` in one rename.

    Returns each file's sha256. ``target`` is untouched if any file fails.
    """
    hashes = {remote.name: verify_file(staging / remote.name, remote) for remote in remotes}
    shutil.rmtree(staging / ".cache", ignore_errors=True)  # the hub's resume bookkeeping
    (staging / DOWNLOAD_STAMP).write_text(
        json.dumps({"source": source or {}, "sha256": hashes}, indent=1)
    )
    if target.exists():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(staging, target)
    return hashes


def progress_tqdm(callback: Callable[[str, int, int | None], None]) -> type[Any]:
    """A tqdm class for ``hf_hub_download`` that reports ``(file, bytes done, total)``."""
    from tqdm.auto import tqdm

    class ProgressTqdm(tqdm):  # type: ignore[misc]  # tqdm has no type hints
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)
            self._label = str(kwargs.get("desc") or "")
            self._done = int(kwargs.get("initial") or 0)

        def update(self, n: float | None = 1) -> bool | None:
            self._done += int(n or 0)
            callback(self._label, self._done, self.total)
            result: bool | None = super().update(n)
            return result

    return ProgressTqdm


def download_model(
    repo: str,
    model_id: str,
    *,
    revision: str | None = None,
    names: Sequence[str] | None = None,
    sha256: dict[str, str] | None = None,
    root: Path | None = None,
    tqdm_class: type[Any] | None = None,
    token: str | None = None,
) -> tuple[Path, dict[str, str]]:
    """Fetch ``repo`` (or its files ``names``) into ``<models dir>/<model_id>``; see the module.

    Returns the folder and each file's verified sha256.
    """
    try:
        return _download_model(
            repo,
            model_id,
            revision=revision,
            names=names,
            sha256=sha256,
            root=root,
            tqdm_class=tqdm_class,
            token=token,
        )
    except DesktopRtError:
        raise
    except Exception as exc:  # the hub client's network, auth and offline errors
        if type(exc).__module__.split(".")[0] not in _HUB_ERROR_MODULES:
            raise
        raise DownloadError(
            f"Could not download {repo}: {exc}. Check the network connection (and that HF_HUB_OFFLINE "
            f"is not set) and the repository name, then run the download again: files already "
            f"fetched are kept and the download resumes."
        ) from exc


_HUB_ERROR_MODULES = {"huggingface_hub", "requests", "httpx", "urllib3", "hf_xet"}


class DownloadError(ModelError):
    """A model could not be fetched from the hub (network, offline mode, access)."""


def _download_model(
    repo: str,
    model_id: str,
    *,
    revision: str | None,
    names: Sequence[str] | None,
    sha256: dict[str, str] | None,
    root: Path | None,
    tqdm_class: type[Any] | None,
    token: str | None,
) -> tuple[Path, dict[str, str]]:
    from huggingface_hub import hf_hub_download

    remotes = hub_files(repo, revision, names, token)
    given = {k: v.lower() for k, v in (sha256 or {}).items()}
    unknown = set(given) - {r.name for r in remotes}
    if unknown:
        raise ModelMissingError(
            f"--sha256 names {', '.join(sorted(unknown))}, which is not among the files fetched."
        )
    remotes = [RemoteFile(r.name, r.size, given.get(r.name, r.sha256), r.git_sha1) for r in remotes]
    staging = staging_dir(model_id, root)
    staging.mkdir(parents=True, exist_ok=True)
    for remote in pending_files(staging, remotes):
        hf_hub_download(  # tqdm_class None: a terminal bar
            repo,
            remote.name,
            revision=revision,
            local_dir=staging,
            token=token,
            tqdm_class=tqdm_class,
        )
        try:
            verify_file(staging / remote.name, remote)
        except ModelCorruptError as exc:
            (staging / remote.name).unlink(missing_ok=True)
            raise ModelCorruptError(
                f"{exc} It was deleted; run the download again to fetch it anew."
            ) from None
    target = (root if root is not None else models_dir()) / model_id
    hashes = install(staging, target, remotes, {"repo": repo, "revision": revision})
    return target, hashes
