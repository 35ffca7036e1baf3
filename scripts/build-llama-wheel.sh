#!/usr/bin/env bash
# Build (once) and cache the llama-cpp-python wheel that desktop-rt depends on.
#
# llama-cpp-python publishes only an sdist, and compiling llama.cpp takes ~9 minutes on 2 cores.
# To make repeated installs and CI fast:
#   * the wheel is cached under $DESKTOP_RT_WHEEL_CACHE, keyed on version + build flags, so an
#     install with the cache present compiles nothing;
#   * when it must compile, it does so from a source tree at a stable path with a fixed CMake
#     build dir and ccache as compiler launcher, so a rebuild of the same source takes seconds.
# Usage: scripts/build-llama-wheel.sh [PYTHON]   (prints the wheel path on its last line)
set -euo pipefail

PY=${1:-python3}
VERSION=0.3.36
# Portable x86-64-v3 build (AVX2/FMA/F16C), not -march=native, so the wheel and the bundle run
# on other machines of the same class. Changing flags changes the cache key.
CMAKE_FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF"
CACHE_ROOT=${DESKTOP_RT_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/desktop-rt}
KEY=$(printf '%s|%s|%s' "$VERSION" "$CMAKE_FLAGS" "$("$PY" -c 'import sys;print(sys.implementation.cache_tag)')" | sha256sum | cut -c1-16)
WHEEL_DIR="$CACHE_ROOT/wheels/llama-cpp-python-$VERSION-$KEY"
SRC_DIR="$CACHE_ROOT/build/llama-cpp-python-$VERSION"

existing=$(ls "$WHEEL_DIR"/llama_cpp_python-"$VERSION"-*.whl 2>/dev/null | head -n1 || true)
if [ -n "$existing" ]; then
  echo "$existing"
  exit 0
fi

mkdir -p "$WHEEL_DIR" "$CACHE_ROOT/build"
if [ ! -f "$SRC_DIR/pyproject.toml" ]; then
  tmp=$(mktemp -d)
  "$PY" -m pip download --quiet --no-deps --no-binary :all: "llama-cpp-python==$VERSION" -d "$tmp"
  tar -xzf "$tmp"/llama_cpp_python-"$VERSION".tar.gz -C "$CACHE_ROOT/build"
  mv "$CACHE_ROOT/build/llama_cpp_python-$VERSION" "$SRC_DIR"
  rm -rf "$tmp"
fi

export CMAKE_ARGS="$CMAKE_FLAGS -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
export CCACHE_DIR=${CCACHE_DIR:-$CACHE_ROOT/ccache}
export CCACHE_BASEDIR="$SRC_DIR"
command -v ccache >/dev/null || echo "warning: ccache not found; the build will not be cached" >&2
# A fixed build dir keeps object paths stable between runs (ccache hits).
"$PY" -m pip wheel --no-deps --no-build-isolation -w "$WHEEL_DIR" \
  -C build-dir="$CACHE_ROOT/build/cmake-$KEY" "$SRC_DIR" >&2
ls "$WHEEL_DIR"/llama_cpp_python-"$VERSION"-*.whl | head -n1
