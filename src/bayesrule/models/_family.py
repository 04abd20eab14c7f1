"""The ``from_stats`` that families sharing hyperparameters share.

A family of smoothed counts (multinomial, complement, Bernoulli,
categorical) takes ``alpha``, ``force_alpha`` and ``feature_names``; a
family of kernel densities takes ``bandwidth``, ``bandwidth_floor``,
``method``, ``grid_size`` and ``feature_names``. Each base below checks
those once, in one order, and documents them once; a family implements only
its derivation from the checked values (``_smoothed`` or ``_kernels``).
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple, TypeVar

import numpy as np
from numpy.typing import NDArray

from ._bandwidth import kde_options
from ._checks import present_classes, smoothing

__all__ = ["KernelFamily", "KernelOptions", "SmoothedFamily", "Smoothing"]

_S = TypeVar("_S", bound="SmoothedFamily")
_K = TypeVar("_K", bound="KernelFamily")


class Smoothing(NamedTuple):
    """The checked options of a smoothed family's ``from_stats``."""

    present: NDArray[np.bool_]  #: the classes with weight, those modelled
    alpha: Any  #: the smoothing, checked (a float or an (n_features,) array)
    given: Any  #: ``alpha`` as given, for messages
    names: Any  #: the feature names (or None), for messages


class KernelOptions(NamedTuple):
    """The checked options of a kernel family's ``from_stats``."""

    present: NDArray[np.bool_]  #: the classes with weight, those modelled
    rule: Any  #: the checked bandwidth: a rule's name, or per-feature numbers
    floor: float  #: ``bandwidth_floor``
    kde: dict[str, Any]  #: ``method`` and ``grid_size``, as KernelDensity takes them
    given: Any  #: ``bandwidth`` as given, for messages
    names: Any  #: the feature names (or None), for messages


class SmoothedFamily:
    """Base of the families of additively smoothed counts."""

    #: whether ``from_stats`` checks, before the family's derivation, that
    #: every class with weight observes every feature (else the family does)
    checks_observed: ClassVar[bool] = True

    @classmethod
    def from_stats(
        cls: type[_S],
        stats: Any,
        *,
        alpha: Any = 1.0,
        force_alpha: bool = True,
        feature_names: Any = None,
        **hyper: Any,
    ) -> _S:
        """The model of each class with positive weight in ``stats``.

        Parameters
        ----------
        stats : bayesrule.stats.CountStats or bayesrule.stats.CategoryStats
            The family's statistics (see its class docstring).
        alpha : float or array-like of shape (n_features,), default=1.0
            Additive smoothing (the family's rule is in its class docstring).
        force_alpha : bool, default=True
            If False, an alpha below 1e-10 is raised to 1e-10 (with a warning).
        feature_names : sequence of str, optional
            Used in error messages.
        **hyper
            The family's own hyperparameters (``min_categories`` of
            :class:`~bayesrule.models.Categorical`, ``norm`` of
            :class:`~bayesrule.models.ComplementWeights`).

        Raises
        ------
        ValueError
            If no class has weight, alpha is negative or of the wrong shape,
            a class never observes a feature, or (Bernoulli) a probability is
            1 or undefined (``alpha=0``).
        """
        observed = cls.checks_observed
        present, a = smoothing(stats, alpha, force_alpha, feature_names, observed=observed)
        return cls._smoothed(stats, Smoothing(present, a, alpha, feature_names), **hyper)

    @classmethod
    def _smoothed(
        cls: type[_S], stats: Any, s: Smoothing
    ) -> _S:  # pragma: no cover - every family defines it
        """The family's derivation from its statistics and the checked options."""
        raise NotImplementedError


class KernelFamily:
    """Base of the families of kernel densities of the distinct values."""

    @classmethod
    def from_stats(
        cls: type[_K],
        stats: Any,
        *,
        bandwidth: Any = "scott",
        bandwidth_floor: float = 0.1,
        method: str = "auto",
        grid_size: int = 1024,
        feature_names: Any = None,
        **hyper: Any,
    ) -> _K:
        """The model of each class with positive weight in ``stats``.

        Parameters
        ----------
        stats : bayesrule.stats.ValueCountStats
        bandwidth : {'scott', 'silverman', 'cv'}, float or array-like of shape (n_features,)
            See :func:`~bayesrule.models._bandwidth.bandwidths`; 'cv' picks, per
            class and feature, the multiple of Scott's bandwidth in
            :data:`~bayesrule.models.kernel.CV_FACTORS` of largest leave-one-out
            likelihood.
        bandwidth_floor : float, default=0.1
            Rule-of-thumb and 'cv' bandwidths are at least this multiple of the
            feature's Scott bandwidth over all classes (of its values that are
            not atoms, for :class:`~bayesrule.models.PointMassKernelDensity`).
        method : {'auto', 'exact', 'grid'}, default='auto'
        grid_size : int, default=1024
        feature_names : sequence of str, optional
            Used in error messages.
        **hyper
            The family's own hyperparameters (``point_mass`` and ``alpha`` of
            :class:`~bayesrule.models.PointMassKernelDensity`).
        """
        present = present_classes(stats)
        b, floor, kde = kde_options(
            bandwidth, bandwidth_floor, method, grid_size, stats.n_features, feature_names
        )
        options = KernelOptions(present, b, floor, kde, bandwidth, feature_names)
        return cls._kernels(stats, options, **hyper)

    @classmethod
    def _kernels(
        cls: type[_K], stats: Any, options: KernelOptions
    ) -> _K:  # pragma: no cover - every family defines it
        """The family's derivation from its statistics and the checked options."""
        raise NotImplementedError
