"""The engine: audio, models, streaming and the realtime protocol. No Qt below this package."""
