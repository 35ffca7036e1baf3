"""``desktop-rt serve``: the realtime server, headless."""

from __future__ import annotations

import argparse


def add_parser(sub) -> None:
    p = sub.add_parser("serve", help="run the realtime server without a window")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8777, help="port (default 8777; 0 picks a free one)")
    p.add_argument("--api-key", default=None, help="require this key from clients")
    p.add_argument(
        "--model", default=None, help="model id or path (default: the embedded whisper-base)"
    )
    p.add_argument(
        "--mmproj",
        default=None,
        help="audio projector (mmproj .gguf) of a GGUF speech model given with --model",
    )
    p.add_argument(
        "--models-file",
        default=None,
        help="models to serve (default: models.toml in the config dir); ignored with --model",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from desktop_rt.engine.server.server import (
        serve_forever,
    )  # filled in by the server work (issue 3)

    return serve_forever(args)
