"""``desktop-rt dictate press|release|toggle``: start or stop dictation in the running app.

For Wayland, where no app may grab a global shortcut: bind a key in the compositor to this
command (docs/design/dictation.md). It hands the verb to the app's
:mod:`~desktop_rt.dictation.command_trigger` socket and exits 0, or exits 1 saying why (the app
is not running, or dictation is off).
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from desktop_rt.dictation.command_trigger import VERBS, send_command

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "dictate",
        help="start or stop dictation in the running app (bind it to a key on Wayland)",
        description=(
            "press/release: the bound key went down/up (hold or tap, as set in the app); "
            "toggle: start dictating, or stop if dictating."
        ),
    )
    p.add_argument("verb", choices=VERBS)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    send_command(args.verb, os.environ)
    return 0
