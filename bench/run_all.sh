#!/usr/bin/env bash
# Full streaming benchmark in one command, from the project root or anywhere:
#
#   bash bench/run_all.sh                 # set up the peer venv if missing, then 2 streams x 3 systems x 3 runs
#   bash bench/run_all.sh --quick         # any bench_streaming.py options pass through
#   bash bench/run_all.sh --setup-only    # only create bench/.venv-peer
#
# Needs the project venv (.venv, `pip install -e '.[test]'`). The peer (whisperlivekit, which
# imports torch) gets its own venv, bench/.venv-peer. torch is installed FIRST and pinned to the
# CPU build so that pip never resolves a multi-GB CUDA torch for whisperlivekit.
# Run it on a quiet machine: the report flags a busy one (load average > half the cores).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="$ROOT/.venv/bin/python"
PEER="$ROOT/bench/.venv-peer"
TORCH="${TORCH_SPEC:-torch==2.13.0}"

if [[ ! -x "$PY" ]]; then
    echo "project venv missing: python3 -m venv .venv && .venv/bin/pip install -e '.[test]'" >&2
    exit 1
fi

setup_peer() {
    echo "setting up the peer venv in $PEER ..." >&2
    rm -rf "$PEER"
    python3 -m venv "$PEER"
    local pip=("$PEER/bin/pip" install --quiet --disable-pip-version-check)
    # CPU torch first, from local wheels only (pip's find-links; these machines keep the CPU
    # build on disk). Elsewhere fall back to PyTorch's CPU index, never PyPI's CUDA build.
    if "${pip[@]}" --no-index --no-deps "$TORCH" 2>/dev/null; then
        "${pip[@]}" "$TORCH"  # its small pure-Python dependencies; torch itself is satisfied
    else
        "${pip[@]}" "$TORCH" --index-url https://download.pytorch.org/whl/cpu
    fi
    "${pip[@]}" whisperlivekit==0.2.26 faster-whisper==1.2.1 numpy soundfile jiwer
    "${pip[@]}" -e "$ROOT" --no-deps
    # Refuse a CUDA torch sneaking in through a dependency.
    "$PEER/bin/python" -c 'import torch,sys; print("peer torch", torch.__version__); sys.exit(torch.version.cuda is not None)'
    touch "$PEER/.bench-ready"
}

if [[ ! -f "$PEER/.bench-ready" ]]; then
    setup_peer
fi
if [[ "${1:-}" == "--setup-only" ]]; then
    exit 0
fi

export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
exec "$PY" "$ROOT/bench/bench_streaming.py" "$@"
