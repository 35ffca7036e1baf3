"""``desktop-rt serve``: the realtime server, headless, until SIGINT or SIGTERM.

With ``--tls-cert``/``--tls-key`` (or ``--tls-self-signed``, a pair made once in the config
dir's ``tls/`` folder) it serves ``wss://`` and ``https://`` and prints the certificate's
SHA-256 fingerprint.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from desktop_rt.errors import DesktopRtError

if TYPE_CHECKING:
    from desktop_rt.engine.asr.backend import AsrBackend
    from desktop_rt.engine.models.catalogue import ModelsConfig
    from desktop_rt.engine.server.tls import TlsFiles

__all__ = ["add_parser", "run"]

WAKE_SECONDS = 0.2
"""How often the main thread wakes to run signal handlers (docs/design/server.md)."""


def add_parser(sub: Any) -> None:
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
    p.add_argument(
        "--tls-cert", default=None, help="PEM certificate (chain): serve wss:// and https://"
    )
    p.add_argument("--tls-key", default=None, help="PEM private key of --tls-cert (unencrypted)")
    p.add_argument(
        "--tls-self-signed",
        action="store_true",
        help="serve wss:// with a self-signed certificate made once in the config dir",
    )
    p.add_argument(
        "--cpu-budget",
        type=_cpu_budget,
        default=0.8,
        help="share of the inference threads passes may use over any 10 s (0 to 1, default 0.8)",
    )
    p.add_argument(
        "--max-sessions",
        type=_max_sessions,
        default=None,
        help="websocket sessions open at once (default: from memory and cores; 0: no limit)",
    )
    p.set_defaults(func=run)


def _cpu_budget(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a number above 0 and at most 1, not {text!r}")
    return value


def _max_sessions(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"must be a whole number, 0 or more, not {text!r}")
    return int(text)


def _tls_files(args: argparse.Namespace) -> TlsFiles | None:
    """The certificate and key the arguments name (made now for --tls-self-signed), or None."""
    from pathlib import Path

    from desktop_rt.engine.server.tls import (
        TlsFiles,
        fingerprint,
        self_signed_pair,
        server_context,
    )
    from desktop_rt.paths import config_dir

    cert, key = getattr(args, "tls_cert", None), getattr(args, "tls_key", None)
    self_signed = bool(getattr(args, "tls_self_signed", False))
    if self_signed and (cert or key):
        raise DesktopRtError("--tls-self-signed makes its own pair: drop --tls-cert and --tls-key.")
    if bool(cert) != bool(key):
        raise DesktopRtError("--tls-cert and --tls-key go together: give both files, or neither.")
    if self_signed:
        files, created = self_signed_pair(config_dir() / "tls", args.host)
        made = "made" if created else "using"
        print(f"desktop-rt: {made} the self-signed certificate {files.cert}", flush=True)
    elif cert and key:
        files = TlsFiles(Path(cert), Path(key))
    else:
        return None
    server_context(files)  # a clear error before the model loads
    print(f"desktop-rt: TLS certificate SHA-256 fingerprint {fingerprint(files.cert)}", flush=True)
    return files


def _what_to_serve(
    args: argparse.Namespace,
) -> tuple[str, ModelsConfig | None, Callable[[], AsrBackend]]:
    """``(primary model id, models file or None, loader of the primary)``.

    ``--model`` serves that one model; without it the models file is read (``--models-file``,
    default ``<config dir>/models.toml``) and the embedded model is loaded first.
    """
    from desktop_rt.engine.models.catalogue import load_models_file
    from desktop_rt.engine.models.embedded import DEFAULT_MODEL_ID
    from desktop_rt.engine.models.kinds import describe_model, open_backend
    from desktop_rt.engine.models.runtimes import entry_loader

    spec = getattr(args, "model", None)
    if spec:
        mmproj = getattr(args, "mmproj", None)
        loader = (
            (lambda: open_backend(spec, mmproj=mmproj)) if mmproj else (lambda: open_backend(spec))
        )
        return describe_model(spec), None, loader
    models = load_models_file(getattr(args, "models_file", None))
    entry = models.get(DEFAULT_MODEL_ID)
    if entry is None:  # load_models_file keeps the embedded entry; a hand-edited id may not
        raise DesktopRtError(f"the models file {models.path} has no entry '{DEFAULT_MODEL_ID}'")
    return DEFAULT_MODEL_ID, models, entry_loader(entry)


def run(args: argparse.Namespace) -> int:
    """Listen until SIGINT or SIGTERM, then stop cleanly. Returns 0."""
    import signal
    import threading

    from desktop_rt.engine.asr.worker import WorkerConfig
    from desktop_rt.engine.server.server import RealtimeServer, ServerConfig

    tls = _tls_files(args)
    model_id, models, loader = _what_to_serve(args)
    config = ServerConfig(
        tls=tls,
        host=args.host,
        port=args.port,
        api_key=args.api_key or None,
        model_id=model_id,
        models=models,
        worker=WorkerConfig(cpu_budget=args.cpu_budget),
        max_sessions=args.max_sessions,
    )
    server = RealtimeServer(config, loader)
    stop = threading.Event()
    previous = {
        sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        print(f"desktop-rt: loading model {model_id}", flush=True)
        server.start()
        if models is not None and len(server.catalog.ids) > 1:
            print(
                f"desktop-rt: models {', '.join(server.catalog.ids)} (from {models.path})",
                flush=True,
            )
        print(f"desktop-rt: listening on {server.url}", flush=True)
        while not stop.wait(WAKE_SECONDS):  # not one long wait: see WAKE_SECONDS
            pass
        print("desktop-rt: stopping", flush=True)
    finally:
        server.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0
