"""The ``desktop-rt`` command: the GUI by default, ``serve``, ``transcribe FILE``, ``models``,
``dictate``."""

from __future__ import annotations

import argparse
import sys

from desktop_rt import __version__
from desktop_rt.errors import DesktopRtError

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="desktop-rt",
        description="Live local speech transcription with an OpenAI-Realtime-compatible server.",
    )
    parser.add_argument("--version", action="version", version=f"desktop-rt {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    from desktop_rt.commands import dictate, models, serve, transcribe

    transcribe.add_parser(sub)
    serve.add_parser(sub)
    models.add_parser(sub)
    dictate.add_parser(sub)
    gui = sub.add_parser("gui", help="open the desktop app (the default)")
    gui.set_defaults(func=_run_gui)
    return parser


def _run_gui(args: argparse.Namespace) -> int:
    try:
        from desktop_rt.ui.app import run_app
    except ImportError as exc:  # the window is built on top of the engine; see issue tracker
        print(
            f"desktop-rt: the desktop window is not available in this build ({exc}).",
            file=sys.stderr,
        )
        print("Use `desktop-rt serve` or `desktop-rt transcribe FILE`.", file=sys.stderr)
        return 2
    return run_app(args)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", _run_gui)
    try:
        return int(func(args) or 0)
    except DesktopRtError as exc:
        print(f"desktop-rt: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
