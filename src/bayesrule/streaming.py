"""Out-of-core fitting and prediction: the public names of :mod:`bayesrule.backends.stream`."""

from .backends.stream import fit_stream, iter_predict, predict_stream, read_blocks

__all__ = ["fit_stream", "iter_predict", "predict_stream", "read_blocks"]
