#!/usr/bin/env bash
# Build the double-click app for Linux x86-64 with PyInstaller (see packaging/README.md).
#
#   packaging/build.sh [--dist DIR] [--no-tarball]
#
# Makes DIR/desktop-rt/ (default DIR: dist), a folder holding the `desktop-rt` executable and
# everything it needs (Python, Qt, PortAudio, CTranslate2, llama.cpp, Silero VAD, the embedded
# Whisper model parts), the .desktop entry and icon, add-to-menu.sh and README.txt; then
# DIR/desktop-rt-<version>-linux-x86_64.tar.gz, which unpacks to desktop-rt-<version>/.
# The version is read from pyproject.toml. Needs the project installed in .venv
# (scripts/install.sh); installs PyInstaller there if it is missing.
# Environment: PYTHON (default .venv/bin/python), DESKTOP_RT_BUILD_DIR (PyInstaller's work
# folder, default build/pyinstaller).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

DIST=dist
TARBALL=1
while [ $# -gt 0 ]; do
  case "$1" in
    --dist) DIST=$2; shift 2 ;;
    --no-tarball) TARBALL=0; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "build.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$DIST"
DIST=$(cd "$DIST" && pwd)

PY=${PYTHON:-$ROOT/.venv/bin/python}
PYINSTALLER_VERSION=6.22.3
WORK=${DESKTOP_RT_BUILD_DIR:-$ROOT/build/pyinstaller}

[ -x "$PY" ] || { echo "build.sh: $PY not found; run scripts/install.sh first" >&2; exit 1; }
VERSION=$("$PY" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')
ARCH=$(uname -m)
[ "$(uname -s)" = Linux ] || { echo "build.sh: builds the Linux bundle; see packaging/README.md for others" >&2; exit 1; }

if ! "$PY" -m PyInstaller --version >/dev/null 2>&1; then
  echo "build.sh: installing pyinstaller==$PYINSTALLER_VERSION into $(dirname "$(dirname "$PY")")" >&2
  "$PY" -m pip install --quiet "pyinstaller==$PYINSTALLER_VERSION"
fi
echo "build.sh: desktop-rt $VERSION with PyInstaller $("$PY" -m PyInstaller --version)" >&2

APP="$DIST/desktop-rt"
rm -rf "$APP"
start=$(date +%s)
"$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath "$DIST" --workpath "$WORK" packaging/desktop-rt.spec >&2

# Files a user sees next to the executable.
cp desktop_rt/resources/desktop-rt.svg "$APP/desktop-rt.svg"
cp packaging/desktop-rt.desktop "$APP/desktop-rt.desktop"
install -m 755 packaging/add-to-menu.sh "$APP/add-to-menu.sh"
sed "s/@VERSION@/$VERSION/" packaging/README-bundle.txt > "$APP/README.txt"
[ -f LICENSE ] && cp LICENSE "$APP/LICENSE.txt"

# The frozen app must run and report the version of pyproject.toml.
reported=$("$APP/desktop-rt" --version)
[ "$reported" = "desktop-rt $VERSION" ] || { echo "build.sh: the bundle says '$reported', expected 'desktop-rt $VERSION'" >&2; exit 1; }

echo "build.sh: $APP ($(du -sh "$APP" | cut -f1)) in $(( $(date +%s) - start )) s" >&2
if [ "$TARBALL" = 1 ]; then
  TAR="$DIST/desktop-rt-$VERSION-linux-$ARCH.tar.gz"
  GZ="gzip -6"
  command -v pigz >/dev/null && GZ="pigz -6"
  tar -C "$DIST" --transform "s|^desktop-rt|desktop-rt-$VERSION|SH" --owner=0 --group=0 \
    -I "$GZ" -cf "$TAR.partial" desktop-rt
  mv "$TAR.partial" "$TAR"
  echo "build.sh: $TAR ($(du -h "$TAR" | cut -f1))" >&2
  echo "$TAR"
else
  echo "$APP"
fi
