"""Shrinkage of covariance matrices from statistics: the public names of :mod:`bayesrule.models.covariance`."""

from .models.covariance import *  # noqa: F403
from .models.covariance import __all__  # noqa: F401
