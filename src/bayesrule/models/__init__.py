"""Models of one class, built from statistics: each offers ``log_prob`` and ``sample``."""

from .gaussian import Gaussian, stacked_log_prob

__all__ = ["Gaussian", "stacked_log_prob"]
