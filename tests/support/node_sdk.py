"""The official ``openai`` Node SDK, installed once from ``tests/node`` and run as a client.

:func:`node_client_dir` copies ``tests/node`` (its package.json, lock file and script) into a
cache folder named by the lock file's hash and runs ``npm ci`` there the first time; later runs
reuse it. :func:`run_node_client` runs ``realtime_client.mjs`` against a server and returns the
events it printed. A missing ``node`` or ``npm`` is an error, never a skip (the CI installs them).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["NODE_DIR", "NodeRun", "node_client_dir", "run_node_client"]

NODE_DIR = Path(__file__).parents[1] / "node"
_FILES = ("package.json", "package-lock.json", "realtime_client.mjs")


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise AssertionError(
            f"{name} is not installed: the Node SDK test needs node and npm "
            f"(scripts/install.sh --test installs them)"
        )
    return found


def node_client_dir() -> Path:
    """A folder holding the script and its ``node_modules`` (installed once per lock file)."""
    lock = (NODE_DIR / "package-lock.json").read_bytes()
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    folder = cache / "desktop-rt-tests" / f"node-{hashlib.sha256(lock).hexdigest()[:16]}"
    folder.mkdir(parents=True, exist_ok=True)
    for name in _FILES:
        shutil.copyfile(NODE_DIR / name, folder / name)
    if not (folder / "node_modules" / ".installed").is_file():
        subprocess.run(
            [_tool("npm"), "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=folder,
            check=True,
            timeout=300,
        )
        (folder / "node_modules" / ".installed").write_text("npm ci done\n")
    return folder


@dataclass
class NodeRun:
    returncode: int
    events: list[dict] = field(default_factory=list)
    stderr: str = ""

    def of_type(self, kind: str) -> list[dict]:
        return [e for e in self.events if e["type"] == kind]


def run_node_client(
    base_url: str,
    pcm16_24k: Path,
    *,
    api_key: str,
    plain: bool,
    extra_ca: Path | None = None,
    model: str | None = None,
) -> NodeRun:
    """Run the SDK client once; its stdout's JSON lines are the server events it received.

    ``model``: open the session with ``{model}`` (sent as ``?model=``), else by intent."""
    folder = node_client_dir()
    env = {**os.environ, "OPENAI_API_KEY": api_key}
    if extra_ca is not None:
        env["NODE_EXTRA_CA_CERTS"] = str(extra_ca)
    args = [_tool("node"), "realtime_client.mjs", base_url, str(pcm16_24k)]
    done = subprocess.run(
        [*args, "plain" if plain else "tls", *([model] if model else [])],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return NodeRun(done.returncode, events, done.stderr)
