"""PyInstaller runtime hook of desktop-rt (runs before the app's code in the frozen bundle).

1. Let ``sounddevice`` find the PortAudio library shipped in the bundle. On Linux it looks
   PortAudio up with ``ctypes.util.find_library("portaudio")``, which asks ldconfig and so finds
   only a system copy. The bundle carries ``libportaudio.so.2`` next to the other libraries
   (``sys._MEIPASS``); ``find_library`` now returns that copy first, so the microphone works on
   machines without the ``libportaudio2`` package. Other names fall through.
2. Give programs the app starts (command models such as llama-server, a browser) the user's own
   library path. The bootloader prepends the bundle's folder to ``LD_LIBRARY_PATH`` (keeping the
   user's value in ``LD_LIBRARY_PATH_ORIG``); inherited, it would make a system program load the
   bundle's copies of libstdc++, ggml, Qt... This process's own loader read the variable at start,
   so changing it here affects child processes only.
"""

import ctypes.util
import glob
import os
import sys

_BUNDLE = getattr(sys, "_MEIPASS", None)
_original_find_library = ctypes.util.find_library


def _find_library(name):
    if _BUNDLE and sys.platform.startswith("linux") and name == "portaudio":
        found = sorted(glob.glob(os.path.join(_BUNDLE, "libportaudio.so*")))
        if found:
            return found[0]
    return _original_find_library(name)


ctypes.util.find_library = _find_library


def _restore_library_path(var="LD_LIBRARY_PATH"):
    original = os.environ.pop(var + "_ORIG", None)
    if original is not None:
        os.environ[var] = original
        return
    current = os.environ.get(var)
    if current is None or not _BUNDLE:
        return
    kept = [
        p
        for p in current.split(os.pathsep)
        if p and os.path.realpath(p) != os.path.realpath(_BUNDLE)
    ]
    if kept:
        os.environ[var] = os.pathsep.join(kept)
    else:
        del os.environ[var]


if _BUNDLE and sys.platform.startswith("linux"):
    _restore_library_path()
