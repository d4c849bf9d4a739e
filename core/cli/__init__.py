"""The ``coven`` command line: a thin shell over the engine's public API."""
