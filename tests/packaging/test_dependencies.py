"""Every third-party module the app imports is installed by a plain install, not only by --test.

Found by following the README on a fresh clone: ``scripts/install.sh && .venv/bin/desktop-rt``
opened a window that said "Loading the speech model…" for ever, because the server imported
``psutil``, which only the test extra installed. This reads every import in ``desktop_rt`` and
checks that its distribution is a runtime dependency in pyproject.toml or one of theirs.
"""

from __future__ import annotations

import ast
import sys
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path

import tomllib
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
# A dependency of one of these platforms counts: the app imports some only there (pynput on
# Windows and macOS, python-xlib on Linux; dictation chooses by sys.platform).
PLATFORMS = ("linux", "win32", "darwin")


def _imported_modules() -> dict[str, str]:
    """Top-level modules imported anywhere in desktop_rt -> the first file importing each."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "desktop_rt").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], str(path.relative_to(ROOT)))
    return found


def _runtime_closure() -> set[str]:
    """The runtime requirements' distribution names and, recursively, theirs (no extras), on
    any of :data:`PLATFORMS`."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pending = [Requirement(text) for text in project["dependencies"]]
    seen: set[str] = set()
    while pending:
        requirement = pending.pop()
        marker = requirement.marker
        if marker is not None and not any(
            marker.evaluate({"extra": "", "sys_platform": platform}) for platform in PLATFORMS
        ):
            continue
        name = requirement.name.lower().replace("_", "-")
        if name in seen:
            continue
        seen.add(name)
        try:
            pending.extend(Requirement(text) for text in requires(requirement.name) or [])
        except PackageNotFoundError:
            continue  # not installed here: its own requirements are unknown, itself counts
    return seen


def test_every_imported_distribution_is_a_runtime_dependency():
    owners = packages_distributions()
    runtime = _runtime_closure()
    missing = {}
    for module, where in _imported_modules().items():
        if module == "desktop_rt" or module in sys.stdlib_module_names or module == "__future__":
            continue
        distributions = {d.lower().replace("_", "-") for d in owners.get(module, [])}
        assert distributions, f"{module} (imported by {where}) is not installed at all"
        if not distributions & runtime:
            missing[module] = (where, sorted(distributions))
    assert missing == {}, f"imported by the app, installed only with --test: {missing}"
