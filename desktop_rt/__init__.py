"""desktop-rt: live local speech transcription with an OpenAI-Realtime-compatible server."""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("desktop-rt")
except _metadata.PackageNotFoundError:  # running from a source tree without install
    __version__ = "0+unknown"

__all__ = ["__version__"]
