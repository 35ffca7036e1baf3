"""Checks that a folder holds a usable CTranslate2 Whisper model, with an error that says what to do."""

from __future__ import annotations

import json
from pathlib import Path

from desktop_rt.errors import ModelCorruptError, ModelMissingError

__all__ = ["check_ctranslate2_dir"]


def check_ctranslate2_dir(folder: Path) -> None:
    """Raise a clear error if ``folder`` is not a usable CTranslate2 Whisper model folder."""
    if not folder.is_dir():
        raise ModelMissingError(
            f"Model folder {folder} does not exist. Pass a folder holding model.bin, "
            f"config.json and tokenizer.json, or a model id from `desktop-rt models list`."
        )
    missing = [n for n in ("model.bin", "config.json") if not (folder / n).is_file()]
    if missing:
        raise ModelMissingError(
            f"Model folder {folder} lacks {', '.join(missing)}: it is not a CTranslate2 Whisper "
            f"model. Convert it with ct2-transformers-converter or pick another folder."
        )
    try:
        json.loads((folder / "config.json").read_text())
    except ValueError as exc:
        raise ModelCorruptError(
            f"{folder / 'config.json'} is not valid JSON ({exc}). Re-download or re-convert the model."
        ) from None
