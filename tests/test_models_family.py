"""The ``from_stats`` the smoothed and the kernel families share."""

import warnings

import numpy as np
import pytest

from bayesrule.models import (
    Bernoulli,
    Categorical,
    ComplementWeights,
    KernelDensity,
    Multinomial,
    PointMassKernelDensity,
)
from bayesrule.stats import CategoryStats, CountStats, ValueCountStats

rng = np.random.default_rng(0)
X = rng.integers(0, 3, size=(60, 4)).astype(float)
y = rng.integers(0, 2, 60)
COUNTS = CountStats.from_data(X, y)
BINARY = CountStats.from_data((X > 0).astype(float), y)
CATS = CategoryStats.from_data(X, y)
VALUES = ValueCountStats.from_data(X + rng.normal(size=X.shape), y)

SMOOTHED = [
    (Multinomial, COUNTS),
    (ComplementWeights, COUNTS),
    (Bernoulli, BINARY),
    (Categorical, CATS),
]
KERNELS = [(KernelDensity, VALUES), (PointMassKernelDensity, VALUES)]


@pytest.mark.parametrize(("family", "stats"), SMOOTHED)
def test_every_smoothed_family_checks_alpha_the_same_way(family, stats):
    with pytest.raises(ValueError, match=r"alpha must be non-negative; got -1"):
        family.from_stats(stats, alpha=-1)
    with pytest.raises(ValueError, match=r"contains `n_features`. Got 2 elements instead of 4"):
        family.from_stats(stats, alpha=[1.0, 1.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        family.from_stats(stats, alpha=0.0, force_alpha=False)
    assert any("setting alpha = 1.0e-10" in str(w.message) for w in caught)
    # the warning points at the caller of from_stats
    assert all(w.filename == __file__ for w in caught if "alpha" in str(w.message))


@pytest.mark.parametrize(("family", "stats"), SMOOTHED + KERNELS)
def test_a_misspelt_hyperparameter_is_refused(family, stats):
    with pytest.raises(TypeError):
        family.from_stats(stats, smoothing=1.0)


@pytest.mark.parametrize(("family", "stats"), KERNELS)
def test_every_kernel_family_checks_its_options_the_same_way(family, stats):
    with pytest.raises(ValueError, match=r"grid_size must be an int >= 16; got 3"):
        family.from_stats(stats, grid_size=3)
    with pytest.raises(ValueError, match=r"method must be 'auto', 'exact' or 'grid'; got 'fast'"):
        family.from_stats(stats, method="fast")
    model = family.from_stats(stats, method="exact")
    out = model.log_prob(X[:5])
    assert out.shape == (5, 2) and np.all(np.isfinite(out))


def test_family_specific_hyperparameters_still_reach_the_derivation():
    normed = ComplementWeights.from_stats(COUNTS, norm=True)
    plain = ComplementWeights.from_stats(COUNTS)
    assert normed.norm and not plain.norm
    wide = Categorical.from_stats(CATS, min_categories=7)
    assert np.all(wide.n_categories == 7)
    none = PointMassKernelDensity.from_stats(VALUES, point_mass=2.0)
    assert none.atoms.shape[1] == 0
