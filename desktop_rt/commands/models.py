"""``desktop-rt models list|add|remove|download|limits``: the models file the server routes between."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from desktop_rt.engine.models.catalogue import (
    EMBEDDED_ENTRY,
    ModelEntry,
    ModelsConfig,
    ModelsFileError,
    ModelSource,
    OptionValue,
    load_models_file,
    models_file_path,
    parse_option_value,
    save_models_file,
)
from desktop_rt.engine.models.embedded import DEFAULT_MODEL_ID
from desktop_rt.engine.models.kinds import (
    BACKENDS,
    KINDS,
    entry_report,
    kind_for_download,
    kind_named,
    kind_of,
)

__all__ = ["add_parser"]

_DOWNLOADABLE = tuple(kind.name for kind in KINDS if kind.in_process)


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "models", help="list, add, remove or download the models the server can serve"
    )
    p.add_argument(
        "--models-file",
        default=None,
        help="the models file (default: models.toml in the config dir)",
    )
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=True)
    ls = verbs.add_parser("list", help="the models and their state")
    ls.add_argument("--json", action="store_true", help="print JSON")
    ls.set_defaults(func=run_list)
    _add_add(verbs)
    rm = verbs.add_parser("remove", help="remove a model from the file")
    rm.add_argument("id")
    rm.add_argument(
        "--delete-files",
        action="store_true",
        help="also delete its folder if desktop-rt downloaded it into the models dir",
    )
    rm.set_defaults(func=run_remove)
    _add_download(verbs)
    lim = verbs.add_parser("limits", help="show or set the global limits")
    lim.add_argument(
        "--global-concurrency-limit",
        type=int,
        help="sessions at once over all models (0: no limit)",
    )
    lim.add_argument("--max-loaded-models", type=int, help="models loaded at once (1 or more)")
    lim.set_defaults(func=run_limits)


def _add_add(verbs: Any) -> None:
    add = verbs.add_parser("add", help="add (or with --replace, change) a model")
    add.add_argument("id", help="the id clients name (?model=ID or in session.update)")
    add.add_argument("--backend", choices=BACKENDS, required=True)
    add.add_argument(
        "--model",
        dest="model_path",
        help="whisper: the CTranslate2 folder; llama: the GGUF text model",
    )
    add.add_argument("--mmproj", help="llama: the audio projector (mmproj) GGUF")
    add.add_argument("--cmd", help="command: the server to start, with ${PORT} where its port goes")
    add.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="command: environment to add",
    )
    _common(add)
    add.add_argument("--replace", action="store_true", help="replace an entry with the same id")
    add.set_defaults(func=run_add)


def _add_download(verbs: Any) -> None:
    dl = verbs.add_parser(
        "download", help="download a model from the Hugging Face hub, verify it and add it"
    )
    dl.add_argument("repo", help="hub repository, e.g. Systran/faster-whisper-small")
    dl.add_argument(
        "--id", dest="model_id", help="the id to give it (default: the repository's name)"
    )
    dl.add_argument("--revision", help="branch, tag or commit (default: main)")
    dl.add_argument(
        "--file",
        dest="files",
        action="append",
        default=[],
        metavar="NAME",
        help="fetch only these files (needed for GGUF repositories: the text model and the mmproj)",
    )
    dl.add_argument(
        "--sha256",
        action="append",
        default=[],
        metavar="NAME=HEX",
        help="expected sha256 of a file",
    )
    dl.add_argument("--backend", choices=_DOWNLOADABLE, help="default: llama if a .gguf is fetched")
    _common(dl)
    dl.set_defaults(func=run_download)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--ttl",
        type=float,
        default=0.0,
        help="unload this many seconds after its last session (0: never)",
    )
    p.add_argument(
        "--concurrency-limit", type=int, default=0, help="sessions at once on it (0: no limit)"
    )
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="backend option, e.g. threads=4, language=en, repeat_penalty=1.1",
    )


def _load(args: argparse.Namespace) -> ModelsConfig:
    return load_models_file(args.models_file)


def _path(args: argparse.Namespace) -> Path:
    return Path(args.models_file) if args.models_file else models_file_path()


def _row(entry: ModelEntry) -> dict[str, Any]:
    report = entry_report(entry)
    return {
        "id": entry.id,
        "backend": entry.backend,
        "ttl": entry.ttl,
        "concurrency_limit": entry.concurrency_limit,
        "state": report.state,
        "location": report.location,
        "options": dict(entry.options),
    }


def run_list(args: argparse.Namespace) -> int:
    config = _load(args)
    rows = [_row(e) for e in config.entries]
    if args.json:
        print(
            json.dumps(
                {
                    "file": str(_path(args)),
                    "global_concurrency_limit": config.global_concurrency_limit,
                    "max_loaded_models": config.max_loaded_models,
                    "models": rows,
                },
                indent=1,
            )
        )
        return 0
    width = max(len(r["id"]) for r in rows)
    print(f"{'ID':<{width}}  BACKEND  TTL     LIMIT  STATE / LOCATION")
    for r in rows:
        ttl = f"{r['ttl']:g}s" if r["ttl"] else "-"
        limit = str(r["concurrency_limit"]) if r["concurrency_limit"] else "-"
        print(f"{r['id']:<{width}}  {r['backend']:<7}  {ttl:<6}  {limit:<5}  {r['state']}")
        print(f"{'':<{width}}  {r['location']}")
    print(
        f"\nglobal_concurrency_limit = {config.global_concurrency_limit or 'none'}, "
        f"max_loaded_models = {config.max_loaded_models}   ({_path(args)})"
    )
    return 0


def _options(backend: str, pairs: list[str]) -> tuple[tuple[str, OptionValue], ...]:
    return tuple(parse_option_value(backend, text) for text in pairs)


def _env(pairs: list[str]) -> tuple[tuple[str, str], ...]:
    out = []
    for text in pairs:
        name, sep, value = text.partition("=")
        if not sep or not name:
            raise ModelsFileError(f"--env takes NAME=VALUE, got {text!r}")
        out.append((name, value))
    return tuple(out)


def run_add(args: argparse.Namespace) -> int:
    config = _load(args)
    if config.get(args.id) is not None and not args.replace:
        raise ModelsFileError(
            f"There is already a model '{args.id}'. Pass --replace to change it, or pick another id."
        )
    paths = [Path(p).expanduser().resolve() if p else None for p in (args.model_path, args.mmproj)]
    embedded = args.id == DEFAULT_MODEL_ID
    if embedded and (
        args.model_path or args.mmproj or args.cmd or args.backend != EMBEDDED_ENTRY.backend
    ):
        raise ModelsFileError(
            f"'{DEFAULT_MODEL_ID}' is the embedded model: only --ttl, --concurrency-limit and "
            f"--option can be set for it. Give another model another id."
        )
    entry = ModelEntry(
        id=args.id,
        backend=args.backend,
        embedded=embedded,
        model_path=str(paths[0]) if paths[0] else None,
        mmproj=str(paths[1]) if paths[1] else None,
        cmd=args.cmd,
        env=_env(args.env),
        options=_options(args.backend, args.option),
        ttl=args.ttl,
        concurrency_limit=args.concurrency_limit,
    )
    config = config.with_entry(entry)
    report = entry_report(entry)
    if not report.ready and kind_of(entry).in_process:  # a server's program may come later
        raise ModelsFileError(f"Not added: {report.state}")
    path = save_models_file(config, _path(args))
    print(f"added {args.id} ({args.backend}) to {path}")
    if not report.ready:
        print(f"note: {report.state}", file=sys.stderr)
    return 0


def run_remove(args: argparse.Namespace) -> int:
    from desktop_rt.paths import models_dir

    config = _load(args)
    entry = config.get(args.id)
    config = config.without(args.id)
    path = save_models_file(config, _path(args))
    print(f"removed {args.id} from {path}")
    if args.delete_files and entry is not None and entry.model_path:
        folder = Path(entry.model_path)
        folder = folder if folder.is_dir() else folder.parent
        if folder.resolve().parent == models_dir().resolve():
            shutil.rmtree(folder)
            print(f"deleted {folder}")
        else:
            print(
                f"kept {folder}: desktop-rt only deletes folders it downloaded into {models_dir()}",
                file=sys.stderr,
            )
    return 0


def _entry_for_download(
    args: argparse.Namespace,
    model_id: str,
    folder: Path,
    names: list[str],
    hashes: dict[str, str],
) -> ModelEntry:
    kind = (kind_named(args.backend) if args.backend else None) or kind_for_download(folder, names)
    model_path, mmproj = kind.download_paths(folder, names)
    return ModelEntry(
        id=model_id,
        backend=kind.name,
        model_path=model_path,
        mmproj=mmproj,
        options=_options(kind.name, args.option),
        ttl=args.ttl,
        concurrency_limit=args.concurrency_limit,
        source=ModelSource(args.repo, args.revision, tuple(sorted(hashes.items()))),
    )


def run_download(args: argparse.Namespace) -> int:
    from desktop_rt.engine.models.downloads import download_model

    config = _load(args)
    model_id = args.model_id or args.repo.rstrip("/").rsplit("/", 1)[-1]
    if config.get(model_id) is not None:
        raise ModelsFileError(f"There is already a model '{model_id}'; pick another id with --id.")
    sha256 = dict(item.partition("=")[::2] for item in args.sha256)
    print(f"downloading {args.repo} as {model_id} (interrupted downloads resume when run again)")
    folder, hashes = download_model(
        args.repo, model_id, revision=args.revision, names=args.files or None, sha256=sha256
    )
    entry = _entry_for_download(args, model_id, folder, sorted(hashes), hashes)
    path = save_models_file(config.with_entry(entry), _path(args))
    print(f"verified {len(hashes)} files; added {model_id} ({entry.backend}) to {path}")
    return 0


def run_limits(args: argparse.Namespace) -> int:
    config = _load(args)
    if args.global_concurrency_limit is not None or args.max_loaded_models is not None:
        config = replace(
            config,
            global_concurrency_limit=_given(
                args.global_concurrency_limit, config.global_concurrency_limit
            ),
            max_loaded_models=_given(args.max_loaded_models, config.max_loaded_models),
        )
        save_models_file(config, _path(args))
    print(f"global_concurrency_limit = {config.global_concurrency_limit}")
    print(f"max_loaded_models = {config.max_loaded_models}")
    return 0


def _given(value: int | None, default: int) -> int:
    return default if value is None else value
