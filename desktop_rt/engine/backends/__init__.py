"""Speech recognition backends, one class each behind the :class:`AsrBackend` protocol."""

from desktop_rt.engine.backends.base import AsrBackend, Word

__all__ = ["AsrBackend", "Word"]
