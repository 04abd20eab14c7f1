"""The projection of mixture discriminant analysis: features to the space of the components."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._types import LOG_2PI as _LOG_2PI
from ._types import Floats as _F

__all__ = ["Projection"]


# ------------------------------------------------------------------ projection
@dataclass(frozen=True)
class Projection:
    """``z = B'((x - c) / s)`` with orthonormal ``B`` (p, d); the rest is noise of variance ``s2``.

    ``s`` (p,) is a positive scale per feature (ones: the features' own
    units), so that the projection, and every variance measured in its
    space, does not depend on the features' units when ``s`` is equivariant
    (each feature's range, say). The residual ``(x - c) / s - B z`` is
    isotropic Gaussian noise of variance ``residual_var`` in the scaled
    features; densities in ``x`` include the Jacobian ``-sum_j log s_j``.
    """

    centre: _F
    basis: _F
    residual_var: float
    scale: _F | None = None

    def __post_init__(self) -> None:
        p = self.centre.size
        s = np.ones(p) if self.scale is None else np.asarray(self.scale, dtype=np.float64)
        object.__setattr__(self, "scale", s)
        # the scale folded into the basis: z = (x - c) @ (B / s[:, None])
        object.__setattr__(self, "_scaled_basis", np.ascontiguousarray(self.basis / s[:, None]))
        object.__setattr__(self, "_log_jacobian", float(np.log(s).sum()))

    @property
    def n_features(self) -> int:
        return int(self.centre.size)

    @property
    def n_dims(self) -> int:
        return int(self.basis.shape[1])

    @property
    def identity(self) -> bool:
        p, d = self.basis.shape
        return (
            p == d
            and bool(np.array_equal(self.basis, np.eye(p)))
            and not np.any(self.centre)
            and bool(np.all(self._scales == 1.0))
        )

    @property
    def _scales(self) -> _F:
        return np.asarray(self.scale)

    def transform(self, X: Any) -> _F:
        X = np.asarray(X, dtype=np.float64)
        if self.identity:
            return X
        B: _F = self._scaled_basis  # type: ignore[attr-defined]
        return np.asarray((X - self.centre) @ B)

    def residual_log_prob(self, X: Any, Z: _F) -> _F:
        """Log density of the part of each row outside the projection, (n,), with the Jacobian."""
        p, d = self.basis.shape
        jac: float = self._log_jacobian  # type: ignore[attr-defined]
        if d >= p or self.residual_var <= 0:
            return np.full(Z.shape[0], -jac)
        D = (np.asarray(X, dtype=np.float64) - self.centre) / self._scales
        r2 = np.maximum(np.einsum("np,np->n", D, D) - np.einsum("nd,nd->n", Z, Z), 0.0)
        k = p - d
        return -0.5 * (r2 / self.residual_var + k * (np.log(self.residual_var) + _LOG_2PI)) - jac

    def back(self, Z: _F, rng: np.random.Generator | None = None) -> _F:
        """Rows in feature space: ``c + s * (B z)``, plus the residual noise when ``rng`` is given."""
        U = Z @ self.basis.T
        p, d = self.basis.shape
        if rng is not None and d < p and self.residual_var > 0:
            E = rng.standard_normal((Z.shape[0], p)) * np.sqrt(self.residual_var)
            U += E - (E @ self.basis) @ self.basis.T
        return np.asarray(self.centre + U * self._scales)


# ------------------------------------------------------------------ the family
