"""Fail when a module is over 400 lines or a function over 60 (STYLE: small modules, small functions).

Usage: ``python scripts/check_sizes.py [PATH ...]`` (default: desktop_rt). Lines are physical
lines of the file; a function's length runs from its ``def`` (decorators excluded) to its last
line. Prints one line per offender and exits 1 if there is any.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def offenders(path: Path) -> list[str]:
    """Every size rule ``path`` breaks, as ``file:line: message``."""
    text = path.read_text(encoding="utf-8")
    found = []
    lines = len(text.splitlines())
    if lines > MAX_MODULE_LINES:
        found.append(f"{path}:1: module has {lines} lines (max {MAX_MODULE_LINES})")
    for node in ast.walk(ast.parse(text, filename=str(path))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                found.append(
                    f"{path}:{node.lineno}: function {node.name} has {length} lines "
                    f"(max {MAX_FUNCTION_LINES})"
                )
    return found


def main(argv: list[str]) -> int:
    roots = [Path(a) for a in argv] or [Path("desktop_rt")]
    files = sorted(f for r in roots for f in ([r] if r.is_file() else r.rglob("*.py")))
    problems = [p for f in files for p in offenders(f)]
    for problem in problems:
        print(problem)
    print(f"check_sizes: {len(files)} files, {len(problems)} over the limits")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
