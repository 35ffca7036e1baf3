"""The double-click app: build the frozen bundle (or reuse a cached one) and smoke-test it.

Building takes a minute or more, so a built bundle is cached under ``~/.cache/desktop-rt/bundle/<key>``
(``DESKTOP_RT_BUNDLE_CACHE`` moves it), where the key hashes everything that goes into it:
``desktop_rt/**``, ``pyproject.toml``, ``packaging/**``, the Python version and the installed
distributions. A changed source means a new build; only the newest bundle is kept.

A failed build is a failed test, never a skip. The smoke test itself is
``packaging/smoke_test.py`` (see its docstring); its report (bundle size, start-up times,
transcript) is printed whether it passes or not.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(
    os.environ.get("DESKTOP_RT_BUNDLE_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "desktop-rt" / "bundle"
)
BUILD_TIMEOUT = 20 * 60

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not sys.platform.startswith("linux"), reason="packaging/build.sh builds the Linux bundle"
    ),
]


def _files(folder: Path):
    for path in sorted(folder.rglob("*")):
        if (
            path.is_file()
            and "__pycache__" not in path.parts
            and path.suffix not in (".pyc", ".pyo")
        ):
            yield path


def bundle_key() -> str:
    """Hash of the sources and the environment a bundle is built from."""
    digest = hashlib.sha256()
    for path in [
        *_files(ROOT / "desktop_rt"),
        ROOT / "pyproject.toml",
        *_files(ROOT / "packaging"),
    ]:
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(sys.version.encode())
    dists = sorted(f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions())
    digest.update("\n".join(dists).encode())
    import llama_cpp  # its libraries are patched after install (scripts/isolate_llama_ggml.py)

    lib = Path(llama_cpp.__file__).parent / "lib"
    digest.update(
        "\n".join(f"{p.name}:{p.lstat().st_size}" for p in sorted(lib.iterdir())).encode()
    )
    return digest.hexdigest()[:20]


def _built(folder: Path) -> bool:
    return (folder / "desktop-rt" / "desktop-rt").is_file() and (folder / "BUILD-OK").is_file()


def ensure_bundle(emit) -> Path:
    """The cached bundle for the current sources, built first if there is none; fails the test
    (never skips) when the build fails."""
    key = bundle_key()
    target = CACHE / key
    if _built(target):
        emit(f"bundle: cached {target}")
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    for leftover in CACHE.glob(".staging-*"):  # failed or interrupted builds
        shutil.rmtree(leftover, ignore_errors=True)
    staging = CACHE / f".staging-{key}-{os.getpid()}"
    staging.mkdir()
    log = staging / "build.log"
    env = dict(os.environ, DESKTOP_RT_BUILD_DIR=str(staging / "work"), PYTHON=sys.executable)
    started = time.monotonic()
    with open(log, "wb") as out:
        try:
            proc = subprocess.run(
                ["bash", str(ROOT / "packaging" / "build.sh"), "--dist", str(staging)],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=BUILD_TIMEOUT,
            )
            code: int | str = proc.returncode
        except subprocess.TimeoutExpired:
            code = f"timed out after {BUILD_TIMEOUT} s"
    took = time.monotonic() - started
    if code != 0:
        shutil.rmtree(staging / "work", ignore_errors=True)
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-80:])
        pytest.fail(
            f"packaging/build.sh failed ({code}) after {took:.0f} s; log {log}:\n{tail}",
            pytrace=False,
        )
    shutil.rmtree(staging / "work", ignore_errors=True)
    if (
        bundle_key() == key
    ):  # else the sources changed during the build: use this bundle once, uncached
        (staging / "BUILD-OK").write_text(f"{key}\nbuilt in {took:.0f} s\n")
    for old in CACHE.iterdir():  # keep only the bundle being installed now
        if old.name != staging.name and not old.name.startswith(".staging-"):
            shutil.rmtree(old, ignore_errors=True)
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    emit(f"bundle: built {target} in {took:.0f} s")
    return target


@pytest.fixture(scope="module")
def capsys_disabled_print(request):
    """Print to the terminal even while pytest captures output (the report belongs in CI's log)."""
    capman = request.config.pluginmanager.getplugin("capturemanager")

    def emit(text: str) -> None:
        if capman is not None:
            with capman.global_and_fixture_disabled():
                print(text, flush=True)
        else:
            print(text, flush=True)

    return emit


@pytest.mark.timeout(BUILD_TIMEOUT + 12 * 60)
def test_bundle_starts_transcribes_and_quits_cleanly(capsys_disabled_print, tmp_path):
    bundle = ensure_bundle(capsys_disabled_print)
    tarballs = sorted(bundle.glob("desktop-rt-*-linux-*.tar.gz"))
    assert tarballs, f"build.sh made no tarball in {bundle}"
    report_path = tmp_path / "smoke.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "packaging" / "smoke_test.py"),
            str(bundle / "desktop-rt"),
            "--tarball",
            str(tarballs[-1]),
            "--json",
            str(report_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=10 * 60,
    )
    capsys_disabled_print("\n" + proc.stdout.strip())
    assert report_path.is_file(), (
        f"the smoke test wrote no report:\n{proc.stdout}\n{proc.stderr[-4000:]}"
    )
    report = json.loads(report_path.read_text())
    assert proc.returncode == 0 and report["ok"], (
        f"{proc.stderr[-6000:]}\nSMOKE TEST FAILED: {report['error']}"
    )
    assert report["exit_codes"] == [0, 0]
