"""The package version, once: ``pyproject.toml`` reads it, ``quota --version`` prints it."""

__version__ = "0.2.0"
