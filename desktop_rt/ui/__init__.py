"""The desktop window: Qt widgets on top of the engine; ``bridge.py`` is the only way in."""
