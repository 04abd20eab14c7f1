"""Utilities at the bottom of the layers: parallelism, validation, configuration, products."""
