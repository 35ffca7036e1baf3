"""ctypes plumbing for a llama.cpp text model + mtmd audio projector (llama-cpp-python 0.3.36).

:class:`NativeSpeechModel` owns the four native objects of a loaded pair (model, context, mtmd
context, one token batch) and :class:`AudioPrompt` the chunks of one tokenized prompt. Both
free their objects on ``close()`` (also on a failed construction), and nothing here keeps a
native pointer beyond its owner's life. All of llama.cpp's logging goes to the Python logger
``desktop_rt.llama`` instead of stderr.

Positions: everything lives in sequence 0 of the KV cache. A text token takes one position; an
audio chunk takes ``n_pos`` (Qwen3-ASR: one per audio token, M-RoPE 1-D).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import threading
from pathlib import Path
from typing import cast

import llama_cpp as L
import llama_cpp.mtmd_cpp as M
import numpy as np

__all__ = ["NativeSpeechModel", "AudioPrompt", "TEXT", "AUDIO"]

log = logging.getLogger("desktop_rt.llama")

TEXT, AUDIO = M.MTMD_INPUT_CHUNK_TYPE_TEXT, M.MTMD_INPUT_CHUNK_TYPE_AUDIO
_GGML_LEVELS = {1: logging.DEBUG, 2: logging.INFO, 3: logging.WARNING, 4: logging.ERROR}  # ggml.h
_EXPECTED = (b"experimental stage",)  # warnings every audio model load prints: debug, not warning
_last_level = [logging.DEBUG]


def _log_to_python(level: int, text: bytes, _user: int | None) -> None:
    py_level = _last_level[0] if level == 5 else _GGML_LEVELS.get(level, logging.DEBUG)
    if py_level >= logging.WARNING and any(e in text for e in _EXPECTED):
        py_level = logging.DEBUG
    _last_level[0] = py_level
    if log.isEnabledFor(py_level):
        log.log(py_level, "%s", text.decode("utf-8", "replace").rstrip())


# Kept for the life of the process: llama.cpp holds on to the C function pointer.
_LOG_CALLBACK = L.llama_log_callback(_log_to_python)
_init_lock = threading.Lock()
_initialised = False


def _init_once() -> None:
    global _initialised
    with _init_lock:
        if not _initialised:
            L.llama_backend_init()
            L.llama_log_set(_LOG_CALLBACK, ctypes.c_void_p(0))
            M.mtmd_helper_log_set(_LOG_CALLBACK, ctypes.c_void_p(0))  # also sets mtmd's
            _initialised = True


class NativeError(RuntimeError):
    """llama.cpp returned an error code; the caller turns it into a user-facing error."""


class AudioPrompt:
    """The chunks of one prompt with its audio, as ``mtmd_tokenize`` produced them."""

    def __init__(self, handle: M.mtmd_input_chunks_p):
        self._handle: M.mtmd_input_chunks_p | None = handle

    def __len__(self) -> int:
        return int(M.mtmd_input_chunks_size(self._handle)) if self._handle else 0

    def chunk(self, i: int) -> M.mtmd_input_chunk_p:
        """The native chunk ``i`` (valid while this prompt is open)."""
        return cast(M.mtmd_input_chunk_p, M.mtmd_input_chunks_get(self._handle, i))

    def kind(self, i: int) -> int:
        """:data:`TEXT` or :data:`AUDIO`."""
        return int(M.mtmd_input_chunk_get_type(self.chunk(i)))

    def text_tokens(self, i: int) -> list[int]:
        n = ctypes.c_size_t()
        ptr = M.mtmd_input_chunk_get_tokens_text(self.chunk(i), ctypes.byref(n))
        return [ptr[j] for j in range(n.value)]

    def n_tokens(self, i: int) -> int:
        return int(M.mtmd_input_chunk_get_n_tokens(self.chunk(i)))

    def n_pos(self, i: int) -> int:
        return int(M.mtmd_input_chunk_get_n_pos(self.chunk(i)))

    @property
    def total_pos(self) -> int:
        return int(M.mtmd_helper_get_n_pos(self._handle))

    @property
    def handle(self) -> M.mtmd_input_chunks_p | None:
        return self._handle

    def close(self) -> None:
        handle, self._handle = self._handle, None
        if handle:
            M.mtmd_input_chunks_free(handle)

    def __enter__(self) -> AudioPrompt:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class NativeSpeechModel:
    """A loaded text model + audio projector; sequence 0 of one context."""

    def __init__(self, text: Path, mmproj: Path, *, threads: int, n_ctx: int, n_batch: int):
        _init_once()
        self.n_batch = n_batch
        self.n_ctx = n_ctx
        self._model: L.llama_model_p | None = None
        self._ctx: L.llama_context_p | None = None
        self._mctx: M.mtmd_context_p | None = None
        self._batch: L.llama_batch | None = None
        try:
            mparams = L.llama_model_default_params()
            mparams.n_gpu_layers = 0
            self._model = L.llama_model_load_from_file(str(text).encode(), mparams)
            if not self._model:
                raise NativeError(f"llama.cpp could not load the text model {text}")
            cparams = L.llama_context_default_params()
            cparams.n_ctx = n_ctx
            cparams.n_batch = n_batch
            cparams.n_ubatch = n_batch
            cparams.n_seq_max = 1
            cparams.n_threads = threads
            cparams.n_threads_batch = threads
            self._ctx = L.llama_init_from_model(self._model, cparams)
            if not self._ctx:
                raise NativeError("llama.cpp could not create a context (out of memory?)")
            pparams = M.mtmd_context_params_default()
            pparams.use_gpu = False
            pparams.n_threads = threads
            pparams.print_timings = False
            pparams.warmup = True
            self._mctx = M.mtmd_init_from_file(str(mmproj).encode(), self._model, pparams)
            if not self._mctx:
                raise NativeError(f"llama.cpp could not load the projector {mmproj}")
            self._batch = L.llama_batch_init(n_batch, 0, 1)
        except BaseException:
            self.close()
            raise
        self._vocab: L.llama_vocab_p = L.llama_model_get_vocab(self._model)
        self.n_vocab = int(L.llama_vocab_n_tokens(self._vocab))
        self.n_embd = int(L.llama_model_n_embd_inp(self._model))
        self.marker: str = (M.mtmd_get_marker(self._mctx) or M.mtmd_default_marker()).decode()
        self.supports_audio = bool(M.mtmd_support_audio(self._mctx))
        self.sample_rate = int(M.mtmd_get_audio_sample_rate(self._mctx))
        self._piece_buf = ctypes.create_string_buffer(256)

    # -- facts ----------------------------------------------------------------------------
    def chat_template(self) -> str | None:
        raw = L.llama_model_chat_template(self._model, None)
        return raw.decode("utf-8", "replace") if raw else None

    def piece(self, token: int, special: bool = True) -> bytes:
        """The bytes of ``token``; control tokens render as their text only with ``special``."""
        n = L.llama_token_to_piece(
            self._vocab, token, self._piece_buf, len(self._piece_buf), 0, special
        )
        return self._piece_buf.raw[: max(n, 0)]

    def is_eog(self, token: int) -> bool:
        return bool(L.llama_vocab_is_eog(self._vocab, token))

    def token_id(self, text: str) -> int | None:
        """The id of a special token written as text (``"<|im_end|>"``), or None."""
        data = text.encode()
        out = (L.llama_token * 8)()
        n = L.llama_tokenize(self._vocab, data, len(data), out, 8, False, True)
        return int(out[0]) if n == 1 else None

    def text_tokens(self, text: str) -> list[int]:
        """``text`` tokenized as plain text (no special tokens parsed, none added)."""
        data = text.encode()
        size = len(data) + 8
        out = (L.llama_token * size)()
        n = L.llama_tokenize(self._vocab, data, len(data), out, size, False, False)
        if n < 0:
            raise NativeError(f"could not tokenize {len(data)} bytes of text")
        return [int(t) for t in out[:n]]

    # -- prompt ---------------------------------------------------------------------------
    def tokenize(self, prompt: str, audio: np.ndarray) -> AudioPrompt:
        """Tokenize ``prompt`` (holding :attr:`marker` once) with ``audio`` (float32 PCM)."""
        audio = np.ascontiguousarray(audio, dtype=np.float32)
        bitmap = M.mtmd_bitmap_init_from_audio(
            audio.size, audio.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        )
        if not bitmap:
            raise NativeError("mtmd could not make an audio bitmap")
        chunks = M.mtmd_input_chunks_init()
        try:
            data = prompt.encode()
            text = M.mtmd_input_text(data, len(data), False, True)
            bitmaps = (M.mtmd_bitmap_p_ctypes * 1)(bitmap)
            rc = M.mtmd_tokenize(self._mctx, chunks, ctypes.byref(text), bitmaps, 1)
            if rc != 0:
                raise NativeError(f"mtmd_tokenize failed ({rc})")
            return AudioPrompt(chunks)
        except BaseException:
            M.mtmd_input_chunks_free(chunks)
            raise
        finally:
            M.mtmd_bitmap_free(bitmap)

    # -- evaluation -----------------------------------------------------------------------
    def eval_prompt(self, prompt: AudioPrompt, n_past: int) -> int:
        """Encode and prefill the whole prompt after ``n_past`` with the C helper; logits of the last token."""
        new_past = L.llama_pos(n_past)
        rc = M.mtmd_helper_eval_chunks(
            self._mctx,
            self._ctx,
            prompt.handle,
            n_past,
            0,
            self.n_batch,
            True,
            ctypes.byref(new_past),
        )
        if rc != 0:
            raise NativeError(f"mtmd_helper_eval_chunks failed ({rc})")
        return new_past.value

    def encode_audio(self, prompt: AudioPrompt, i: int) -> np.ndarray:
        """Run the audio encoder on chunk ``i``; its embeddings, copied (n_tokens x n_embd)."""
        chunk = prompt.chunk(i)
        rc = M.mtmd_encode_chunk(self._mctx, chunk)
        if rc != 0:
            raise NativeError(f"mtmd_encode_chunk failed ({rc})")
        n = prompt.n_tokens(i)
        ptr = M.mtmd_get_output_embd(self._mctx)
        return np.ctypeslib.as_array(ptr, shape=(n, self.n_embd)).copy()

    def decode_audio(self, prompt: AudioPrompt, i: int, embd: np.ndarray, n_past: int) -> int:
        """Prefill audio chunk ``i`` from embeddings ``embd`` at ``n_past``."""
        embd = np.ascontiguousarray(embd, dtype=np.float32)
        new_past = L.llama_pos(n_past)
        rc = M.mtmd_helper_decode_image_chunk(
            self._mctx,
            self._ctx,
            prompt.chunk(i),
            embd.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
            n_past,
            0,
            self.n_batch,
            ctypes.byref(new_past),
            M.mtmd_helper_post_decode_callback(),
            None,
        )
        if rc != 0:
            raise NativeError(f"audio prefill failed ({rc})")
        return new_past.value

    def decode_tokens(self, tokens: list[int], n_past: int, *, all_logits: bool = False) -> int:
        """Prefill ``tokens`` at ``n_past``; logits for the last one (or for each, ``all_logits``)."""
        batch = self._batch
        if batch is None:
            raise NativeError("the model is closed")
        for start in range(0, len(tokens), self.n_batch):
            part = tokens[start : start + self.n_batch]
            last_part = start + len(part) == len(tokens)
            batch.n_tokens = len(part)
            for j, tok in enumerate(part):
                batch.token[j] = tok
                # llama_cpp annotates pos as 2-D; it is POINTER(llama_pos), one per token.
                batch.pos[j] = n_past + j  # type: ignore[call-overload]
                batch.n_seq_id[j] = 1
                batch.seq_id[j][0] = 0
                batch.logits[j] = all_logits or (last_part and j == len(part) - 1)
            rc = L.llama_decode(self._ctx, batch)
            if rc != 0:
                raise NativeError(f"llama_decode failed ({rc})")
            n_past += len(part)
        return n_past

    def logits(self, i: int = -1) -> np.ndarray:
        """A read-only view of the logits of output ``i`` of the last decode (valid until the next)."""
        ptr = L.llama_get_logits_ith(self._ctx, i)
        if not ptr:
            raise NativeError(f"no logits for output {i}")
        view = np.ctypeslib.as_array(ptr, shape=(self.n_vocab,))
        view.flags.writeable = False
        return view

    def forget_from(self, pos: int) -> None:
        """Drop KV cache entries at positions >= ``pos``."""
        mem = L.llama_get_memory(self._ctx)
        if pos <= 0:
            L.llama_memory_clear(mem, True)
        elif not L.llama_memory_seq_rm(mem, 0, pos, -1):
            L.llama_memory_clear(mem, True)
            raise NativeError("could not trim the KV cache")

    # -- lifetime -------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        return self._model is None

    def close(self) -> None:
        """Free the batch, the mtmd context, the context and the model (in that order)."""
        batch, self._batch = self._batch, None
        if batch is not None:
            L.llama_batch_free(batch)
        mctx, self._mctx = self._mctx, None
        if mctx:
            M.mtmd_free(mctx)
        ctx, self._ctx = self._ctx, None
        if ctx:
            L.llama_free(ctx)
        model, self._model = self._model, None
        if model:
            L.llama_model_free(model)

    def __del__(self) -> None:  # last resort; owners call close()
        with contextlib.suppress(Exception):
            self.close()
