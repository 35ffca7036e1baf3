"""What a caller sets on the GGUF backend, and what one of its calls cost.

:class:`LlamaOptions` is fixed when the backend is built; :class:`TranscriptionStats` is
replaced at the start of every ``generate`` and filled in by the prefill and the decoder. The
options' reasons and trade-offs are in docs/design/gguf.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from desktop_rt.engine.asr.llama.prompt_format import ENCODER_BLOCK_CHOICES

__all__ = ["LlamaOptions", "TranscriptionStats"]


@dataclass(frozen=True)
class LlamaOptions:
    """How a GGUF speech model is loaded, prompted, decoded and streamed."""

    threads: int = 0  # CPU threads for llama.cpp and mtmd; 0: one per core
    n_ctx: int = 2048  # context positions (~120 s of audio with the prompt and the output)
    n_batch: int = 512  # tokens per llama_decode call
    max_tokens: int = 448  # output tokens per window, at most; also capped by the window's length:
    max_tokens_per_second: float = 12.0  # output tokens per second of audio (speech needs 3-5)
    token_slack: int = 24  # output tokens on top of the per-second budget (for the header)
    repeat_penalty: float | None = (
        None  # None: the GGUF's general.sampling.penalty_repeat, else off
    )
    repeat_last_n: int | None = None  # recent outputs penalised; None: the GGUF's, else 64
    reuse_cache: bool = True  # keep settled blocks' embeddings and the KV cache's matching prefix
    draft: bool = True  # verify the previous window's output in one batch
    force_prefix: bool = True  # prefill streaming's committed words instead of generating them
    update_seconds: float = 2.0  # new audio worth a streaming update (traits.min_update_seconds)
    encoder_block_seconds: int = 2  # audio is encoded in blocks this long: 1, 2, 4 or 8

    def __post_init__(self) -> None:
        if self.encoder_block_seconds not in ENCODER_BLOCK_CHOICES:
            raise ValueError(
                f"encoder_block_seconds must be one of "
                f"{', '.join(map(str, ENCODER_BLOCK_CHOICES))} (whole seconds that divide the "
                f"encoder's 8 s window), not {self.encoder_block_seconds}"
            )


@dataclass
class TranscriptionStats:
    """What the last call cost, in positions and tokens (for tests and benchmarks)."""

    prompt_positions: int = 0  # KV positions the prompt with its audio filled
    reused_positions: int = 0  # of those, kept from the previous call
    audio_chunks: int = 0  # audio blocks in the window
    reused_audio_chunks: int = 0  # blocks whose KV entries were kept
    encoded_audio_chunks: int = 0  # blocks that went through the encoder in this call
    generated: int = 0  # output tokens, the forced ones included
    drafted: int = 0  # generated tokens that came from a verified draft
    forced: int = 0  # tokens of the committed prefix, prefilled instead of generated
