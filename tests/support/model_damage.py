"""Damage to the embedded model's files, as a failing disk or a stray write leaves it."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def zero_a_megabyte_keeping_size_and_mtime(path: Path) -> None:
    """1 MB of zeros inside ``path``; its size and mtime stay as they were (no stamp notices)."""
    st = path.stat()
    with open(path, "r+b") as f:
        f.seek(40 << 20)
        f.write(b"\0" * (1 << 20))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def truncate_to_half(path: Path) -> None:
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size // 2)


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
