"""Check a GGUF speech-model pair before any of it reaches llama.cpp.

Call :func:`check_pair` (the text model, and its projector or None to find it beside) before
loading: every wrong combination becomes a :class:`~desktop_rt.errors.ModelError` that says what
to do (not GGUF, damaged, the two swapped, no projector, a vision-only projector, widths that do
not match). :func:`read_metadata` reads only a file's key/value header; long arrays are
summarised, never decoded. Why the checks run in Python first: docs/design/gguf.md.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from desktop_rt.errors import ModelFormatError, ModelMismatchError, ModelMissingError

__all__ = ["GGUF_MAGIC", "GgufPair", "is_gguf", "read_metadata", "check_pair", "find_mmproj"]

GGUF_MAGIC = b"GGUF"

# GGUF value types -> struct format (scalars); 8 = string, 9 = array.
_SCALARS = {
    0: "B",
    1: "b",
    2: "H",
    3: "h",
    4: "I",
    5: "i",
    6: "f",
    7: "?",
    10: "Q",
    11: "q",
    12: "d",
}
_STRING, _ARRAY = 8, 9
_MAX_ARRAY_KEPT = 64  # longer arrays are summarised as ("<array>", length)


@dataclass(frozen=True)
class GgufPair:
    """A checked text model + audio projector."""

    text: Path
    mmproj: Path
    architecture: str
    n_embd: int
    projector: str
    chat_template: str | None
    repeat_penalty: float | None
    repeat_last_n: int | None


def is_gguf(path: Path | str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == GGUF_MAGIC
    except OSError:
        return False


def read_metadata(path: Path | str) -> dict[str, Any]:
    """The key/value metadata of a GGUF file (long arrays as ``("<array>", n)``)."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            if f.read(4) != GGUF_MAGIC:
                raise ModelFormatError(
                    f"{path} is not a GGUF file. Give the .gguf files of a llama.cpp speech model "
                    f"(convert Hugging Face weights with llama.cpp's convert_hf_to_gguf.py)."
                )
            version, _n_tensors, n_kv = struct.unpack("<IQQ", _read(f, 20))
            if version < 2:
                raise ModelFormatError(
                    f"{path} is GGUF version {version}; re-convert it with a current llama.cpp."
                )
            meta: dict[str, Any] = {}
            for _ in range(n_kv):
                key = _read_string(f)
                (vtype,) = struct.unpack("<I", _read(f, 4))
                meta[key] = _read_value(f, vtype)
            return meta
    except (struct.error, UnicodeDecodeError, EOFError) as exc:
        raise ModelFormatError(
            f"{path} is a damaged GGUF file ({exc}); download or convert it again."
        ) from exc
    except OSError as exc:
        raise ModelMissingError(f"Could not read {path}: {exc}.") from exc


def find_mmproj(text: Path | str) -> Path | None:
    """The one ``*mmproj*.gguf`` next to ``text``, if there is exactly one."""
    text = Path(text)
    found = [p for p in text.parent.glob("*.gguf") if "mmproj" in p.name.lower() and p != text]
    return found[0] if len(found) == 1 else None


def check_pair(text: Path | str, mmproj: Path | str | None) -> GgufPair:
    """Validate a text GGUF and its audio projector (``None``: the one beside ``text``);
    raise a :class:`ModelError` that says why not."""
    text = Path(text)
    meta = _metadata_of(text, "model")
    arch, n_embd = _check_text_model(text, meta)
    mmproj = Path(mmproj) if mmproj is not None else _mmproj_beside(text)
    pmeta = _metadata_of(mmproj, "mmproj")
    _check_projector(mmproj, pmeta)
    _check_widths(text, mmproj, n_embd, meta.get(f"{arch}.n_deepstack_layers"), pmeta)
    template = meta.get("tokenizer.chat_template")
    penalty = meta.get("general.sampling.penalty_repeat")
    last_n = meta.get("general.sampling.penalty_last_n")
    return GgufPair(
        text=text,
        mmproj=mmproj,
        architecture=arch,
        n_embd=n_embd,
        projector=str(
            pmeta.get("clip.audio.projector_type") or pmeta.get("clip.projector_type") or ""
        ),
        chat_template=template if isinstance(template, str) else None,
        repeat_penalty=float(penalty) if isinstance(penalty, (int, float)) else None,
        repeat_last_n=int(last_n) if isinstance(last_n, int) else None,
    )


def _check_text_model(text: Path, meta: dict[str, Any]) -> tuple[str, int]:
    """The text model's architecture and embedding width."""
    arch = str(meta.get("general.architecture", ""))
    if arch == "clip":
        raise ModelFormatError(
            f"{text.name} is a multimodal projector (mmproj), not a text model. Give the text model "
            f"with --model and this file with --mmproj."
        )
    n_embd = meta.get(f"{arch}.embedding_length")
    if not isinstance(n_embd, int):
        raise ModelFormatError(
            f"{text.name} has no {arch}.embedding_length; it is not a llama.cpp text model."
        )
    return arch, n_embd


def _mmproj_beside(text: Path) -> Path:
    found = find_mmproj(text)
    if found is None:
        raise ModelMissingError(
            f"{text.name} needs its audio projector to transcribe speech. Give the matching "
            f"mmproj file with --mmproj (for Qwen3-ASR: the mmproj-*.gguf published with it)."
        )
    return found


def _check_projector(mmproj: Path, pmeta: dict[str, Any]) -> None:
    if pmeta.get("general.architecture") != "clip":
        raise ModelFormatError(
            f"{mmproj.name} is a text model ({pmeta.get('general.architecture')}), not an audio "
            f"projector. --mmproj takes the mmproj-*.gguf file that comes with the speech model."
        )
    if not pmeta.get("clip.has_audio_encoder"):
        raise ModelFormatError(
            f"{mmproj.name} is a vision projector with no audio encoder; it cannot transcribe "
            f"speech. Give the speech model's audio mmproj."
        )


def _check_widths(
    text: Path, mmproj: Path, n_embd: int, deepstack: object, pmeta: dict[str, Any]
) -> None:
    """The projector's output width must be the text model's input width."""
    proj_dim = pmeta.get("clip.audio.projection_dim")
    # as llama_model_n_embd_inp counts it: deepstack layers take their own copies
    n_embd_inp = n_embd * (1 + (deepstack if isinstance(deepstack, int) else 0))
    if isinstance(proj_dim, int) and proj_dim not in (n_embd, n_embd_inp):
        raise ModelMismatchError(
            f"{mmproj.name} projects audio to width {proj_dim}, but {text.name} has embedding "
            f"width {n_embd}: they are not a pair. Use the mmproj published with this text model "
            f"(the same size: 0.6B with 0.6B, 1.7B with 1.7B)."
        )


def _metadata_of(path: Path, role: str) -> dict[str, Any]:
    if not path.is_file():
        raise ModelMissingError(f"The {role} file {path} does not exist.")
    return read_metadata(path)


def _read(f: BinaryIO, n: int) -> bytes:
    data = f.read(n)
    if len(data) != n:
        raise EOFError("file ends inside the header")
    return data


def _read_string(f: BinaryIO) -> str:
    (n,) = struct.unpack("<Q", _read(f, 8))
    return _read(f, n).decode("utf-8")


def _read_value(f: BinaryIO, vtype: int) -> Any:
    if vtype in _SCALARS:
        fmt = "<" + _SCALARS[vtype]
        return struct.unpack(fmt, _read(f, struct.calcsize(fmt)))[0]
    if vtype == _STRING:
        return _read_string(f)
    if vtype == _ARRAY:
        itype, n = struct.unpack("<IQ", _read(f, 12))
        if itype in _SCALARS:
            size = struct.calcsize("<" + _SCALARS[itype])
            raw = _read(f, size * n)
            if n > _MAX_ARRAY_KEPT:
                return ("<array>", n)
            return list(struct.unpack(f"<{n}{_SCALARS[itype]}", raw))
        if itype == _STRING:
            if n > _MAX_ARRAY_KEPT:
                for _ in range(n):
                    (m,) = struct.unpack("<Q", _read(f, 8))
                    f.seek(m, 1)
                return ("<array>", n)
            return [_read_string(f) for _ in range(n)]
        raise ValueError(f"unsupported array item type {itype}")
    raise ValueError(f"unknown value type {vtype}")
