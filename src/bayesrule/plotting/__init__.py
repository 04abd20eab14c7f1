"""Pictures of fitted models, in scikit-learn's display-object style.

Each display is built with ``from_estimator`` (or ``from_predictions``),
which computes what is drawn, and drawn with ``plot(ax=...)``; the computed
values stay on the object for inspection. matplotlib is imported only when a
display is drawn, and an install hint is given when it is missing.

* :class:`DecisionRegionsDisplay` — decision regions in two dimensions with
  each class's own density: the covariance ellipse of a Gaussian class model,
  a density contour of any other;
* :class:`ConfusionMatrixDisplay` — the row-normalised confusion matrix;
* :class:`SampleGridDisplay` — generated images, a row of samples per class.
"""

from __future__ import annotations

import contextlib
import math
import textwrap
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "ConfusionMatrixDisplay",
    "DecisionRegionsDisplay",
    "SampleGridDisplay",
    "density_level",
    "gaussian_mass",
    "grey_scale",
    "image_shape_for",
    "require_matplotlib",
]

_HINT = "matplotlib is required for plots: pip install 'bayesrule[plot]'"


def require_matplotlib() -> Any:
    """Import matplotlib, or raise ImportError with the install hint."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError(_HINT) from None
    return matplotlib


def _axes(ax: Any, figsize: tuple[float, float]) -> Any:
    require_matplotlib()
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def _colours(n: int) -> list[Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def image_shape_for(n_features: int, minimum: int = 64) -> tuple[int, int] | None:
    """``(s, s)`` when ``n_features`` is a square of at least ``minimum``, else None.

    Small squares (4 features, 9 features) are almost never images, hence the minimum.
    """
    s = math.isqrt(int(n_features))
    return (s, s) if s * s == n_features and n_features >= minimum else None


# --------------------------------------------------------------------- decision regions
def _gaussian_moments(class_model: Any) -> tuple[NDArray[Any], NDArray[Any]] | None:
    """The public ``mean`` and ``covariance`` of a Gaussian class model, else None.

    The covariance is the model's own (after shrinkage, ``reg_param``, RDA's
    blend; pooled for LDA). A diagonal model may give it as its variances.
    """
    mean = getattr(class_model, "mean", None)
    cov = getattr(class_model, "covariance", None)
    if mean is None or cov is None:
        return None
    m = np.asarray(mean, dtype=float).reshape(-1)
    c = np.asarray(cov, dtype=float)
    if c.size == m.size:  # variances of a diagonal model
        c = np.diag(c.reshape(-1))
    return m, c.reshape(m.size, m.size)


def gaussian_mass(n_std: float) -> float:
    """Probability inside the ``n_std``-sigma ellipse of a 2-D Gaussian: ``1 - exp(-n_std²/2)``."""
    return float(-np.expm1(-0.5 * n_std * n_std))


def density_level(log_density: ArrayLike, mass: float) -> float:
    """The log-density level whose super-level set holds ``mass`` of the density on a grid.

    Parameters
    ----------
    log_density : array-like
        Log density on a regular grid (every cell has the same area, which
        therefore cancels); ``-inf`` and NaN carry no mass.
    mass : float in (0, 1)
        Share of the density on the grid inside the level set (a highest
        density region, restricted to the grid).

    Returns
    -------
    float
        The level, or NaN when the density has no finite value on the grid.
    """
    values = np.asarray(log_density, dtype=float).ravel()
    values = values[np.isfinite(values)]
    if values.size == 0:
        return float("nan")
    top = float(values.max())
    density = np.sort(np.exp(values - top))[::-1]
    share = np.cumsum(density)
    share /= share[-1]
    i = min(int(np.searchsorted(share, mass)), density.size - 1)
    return float(np.log(density[i]) + top)


class DecisionRegionsDisplay:
    """Decision regions of a classifier in a plane, with each class's own density.

    Build it with :meth:`from_estimator`. The model is drawn as it is, never
    refitted. For two features the plane is its whole space. For more, the
    plane is a slice of the feature space: by default a Fisher plane (LDA's
    own ``transform``; for other models the discriminants of their class
    means and pooled covariance, or of the data drawn when the class models
    have none), or two chosen features with the others held at their
    training means; the regions are the model's predictions on the slice and
    the contours its class densities there. ``note`` says which.

    Each class density drawn is the model's own, read through the estimator's
    public ``class_model(label)`` and ``class_log_density(X)``: for a Gaussian
    class model (one with ``mean`` and ``covariance``: LDA, QDA, RDA, Gaussian
    naive Bayes, diagonal LDA) its mean and the ``n_std``-sigma ellipse of its
    covariance, so shrinkage, ``reg_param`` and RDA's blend show; for any other
    model (kernel densities, multinomial, Poisson, ... naive Bayes) the
    contour of ``class_log_density`` on the grid that holds the same share of
    the density within the window as the ellipse of a Gaussian would.

    Attributes
    ----------
    xx, yy : ndarray of shape (grid_resolution, grid_resolution)
        The grid.
    regions : ndarray of shape (grid_resolution, grid_resolution)
        Index in ``classes`` of the predicted class at each grid point.
    X : ndarray of shape (n_samples, 2)
        The points drawn (projected when needed), coloured by ``y``.
    means, covariances : ndarrays of shape (n_classes, 2) and (n_classes, 2, 2)
        Mean and covariance of each Gaussian class model, the ellipses drawn;
        NaN for classes whose model is not Gaussian or that have no data.
    log_density : ndarray of shape (n_classes, grid_resolution, grid_resolution) or None
        ``class_log_density`` of each class on the grid (``-inf`` for classes
        without data), whose contours are drawn for non-Gaussian models.
    levels_ : ndarray of shape (n_classes,)
        After :meth:`plot`: the log-density level of each contour drawn, NaN
        where an ellipse (or nothing) is drawn.
    ellipses_, contours_ : lists of length n_classes
        After :meth:`plot`: the matplotlib ``Ellipse`` or ``ContourSet`` of
        each class, None where the class has the other kind (or none).
    plane_ : (origin, basis) or None
        For a Fisher plane, the point ``(u, v)`` of the plane is the feature
        vector ``origin + basis @ (u, v)``, where the regions and densities
        are computed; None for a plane of two features.
    shown_ : ndarray of int
        After :meth:`plot`: the rows of ``X`` drawn (all of them, or a sample
        of ``max_points``).
    """

    def __init__(
        self,
        *,
        xx: NDArray[Any],
        yy: NDArray[Any],
        regions: NDArray[Any],
        classes: NDArray[Any],
        X: NDArray[Any],
        y: NDArray[Any],
        means: NDArray[Any],
        covariances: NDArray[Any],
        log_density: NDArray[Any] | None = None,
        xlabel: str = "feature 1",
        ylabel: str = "feature 2",
        title: str = "Decision regions",
        note: str | None = None,
    ) -> None:
        self.xx, self.yy, self.regions = xx, yy, regions
        self.classes, self.X, self.y = classes, X, y
        self.means, self.covariances = means, covariances
        self.log_density = log_density
        self.xlabel, self.ylabel, self.title, self.note = xlabel, ylabel, title, note
        self.plane_: tuple[NDArray[Any], NDArray[Any]] | None = None

    @classmethod
    def from_estimator(
        cls,
        estimator: Any,
        X: ArrayLike,
        y: ArrayLike,
        *,
        projection: str = "auto",
        features: tuple[Any, Any] | None = None,
        feature_names: list[str] | None = None,
        grid_resolution: int = 200,
        ax: Any = None,
        **plot_kwargs: Any,
    ) -> DecisionRegionsDisplay:
        """Compute and draw the decision regions of a fitted estimator, as it is.

        Parameters
        ----------
        estimator : fitted bayesrule estimator
            Drawn as it is: never refitted.
        X : array-like or DataFrame of shape (n_samples, n_features)
            The points drawn, with the model's features (a DataFrame with
            text or category columns for a table model such as MixedNB).
        y : array-like of shape (n_samples,)
            True labels, used to colour the points.
        projection : {"auto", "fisher", "features"}
            For more than two features, the plane drawn. "fisher": the first
            two Fisher discriminants: LDA's own ``transform`` (whose decision
            in that plane is its own); for another model, the directions
            that separate its class means most against its pooled
            covariance (the class covariances averaged with the training
            weights), from the model's Gaussian class models (QDA, RDA,
            Gaussian naive Bayes, MDA's ...) or, for a model without them
            (kernel, count and mixed naive Bayes), from the class means and
            pooled covariance of ``X`` and ``y``. With two classes the
            second axis is the direction of most spread within the classes.
            "features": two features (``features``, default the first two
            numeric ones), the others held at their training means. "auto":
            "fisher" when every feature is numeric, else "features".
        features : pair of column names or indices, optional
            The two features of the "features" plane.
        feature_names : list of str, optional
            Axis labels; default ``feature_names_in_``.
        grid_resolution : int
            Grid points along each axis.
        ax : matplotlib Axes, optional
        **plot_kwargs
            Passed to :meth:`plot` (``n_std``, ``alpha``).

        Notes
        -----
        With more than two features the plane is an affine slice of the
        feature space, ``x = x0 + A @ (u, v)`` (``plane_``): the regions are
        the model's predictions and the contours its ``class_log_density`` at
        the points of that slice. ``x0`` is the training mean (LDA's
        ``xbar_``, else the class means weighted by the training weights) and
        ``A = W S (Sᵀ W S)⁻¹`` for the two directions ``S`` and the pooled
        covariance ``W``: the point of the slice at ``c`` is the most likely
        point whose projections are ``c`` (a Gaussian's conditional mean),
        so ``(x0 + A c) @ S == c``. For LDA the slice then holds the class
        densities' projections exactly (their precision in the plane is
        ``A.T Σ⁻¹ A = (S.T Σ S)⁻¹``).
        """
        ya = np.asarray(y)
        n_rows = int(np.shape(X)[0]) if hasattr(X, "shape") else len(X)  # type: ignore[arg-type]
        if n_rows != ya.shape[0]:
            raise ValueError(f"X has {n_rows} rows, but y has {ya.shape[0]} labels.")
        if projection not in ("auto", "fisher", "features"):
            raise ValueError(
                f"projection must be 'auto', 'fisher' or 'features'; got {projection!r}."
            )
        frame = _as_frame(X, estimator, feature_names)
        names = [str(c) for c in frame.columns]
        p = len(names)
        if p < 2:
            raise ValueError(f"decision regions need at least 2 features; X has {p}.")
        name = type(estimator).__name__
        own_fisher = _fisher_directions(estimator)
        all_numeric = all(_is_number(frame[c]) for c in names)
        if projection == "auto":
            projection = "fisher" if (p > 2 and all_numeric and features is None) else "features"
        if features is not None and projection == "fisher":
            raise ValueError("features=(x, y) chooses the 'features' plane, not the Fisher one.")
        if p == 2 and features is None:
            projection = "features"

        note: str | None = None
        plane: tuple[NDArray[Any], NDArray[Any]] | None = None
        if projection == "fisher":
            numeric = _numeric(frame, "the Fisher plane")
            spread = False
            if own_fisher is not None:
                x0, S, cov = own_fisher
                source = f"{name}'s own"
            else:
                moments = _class_moments(estimator)
                if moments is not None:
                    source = f"{name}'s class means and pooled covariance:"
                else:
                    moments = _data_moments(numeric, ya)
                    source = "the data's class means and pooled covariance:"
                x0, S, cov, spread = _fisher_plane(*moments)
            S2 = S[:, :2]
            # x0 + A c maps to c in the first two discriminants; A spans the conditional mean
            A = cov @ S2 @ np.linalg.inv(S2.T @ cov @ S2)
            Z = (numeric - x0) @ S2
            xlabel = "first Fisher discriminant"
            if spread:
                ylabel = "most spread direction within the classes"
            else:
                ylabel = "second Fisher discriminant"
            if own_fisher is not None:
                rest = S.shape[1] - 2
                held = (
                    ""
                    if rest == 0
                    else f", the other {rest} discriminant{'s' if rest > 1 else ''} at the centre"
                )
                note = (
                    f"{source} Fisher plane of {p} features{held}; regions and densities of the "
                    "saved model on that plane"
                )
            else:
                note = (
                    f"the Fisher plane of {p} features from {source} each point of the plane "
                    "stands for the most typical point with those coordinates; regions and "
                    "densities of the saved model there"
                )

            plane = (x0, A)

            def points(c: NDArray[Any]) -> Any:
                return _frame_like(x0 + c @ A.T, frame)

        else:
            if features is None:
                numeric_cols = [j for j, c in enumerate(names) if _is_number(frame[c])]
                if len(numeric_cols) < 2:
                    raise ValueError(
                        "decision regions need two numeric features to draw; the model has "
                        f"{len(numeric_cols)}."
                    )
                i, j = numeric_cols[:2]
            else:
                i, j = (_column_index(f, names) for f in features)
                if i == j:
                    raise ValueError(f"choose two different features; got {names[i]!r} twice.")
            for k in (i, j):
                if not _is_number(frame[names[k]]):
                    raise ValueError(
                        f"the feature {names[k]!r} is not numeric; choose numeric features "
                        "for the axes."
                    )
            Z = np.column_stack(
                [frame[names[i]].to_numpy(dtype=float), frame[names[j]].to_numpy(dtype=float)]
            )
            xlabel, ylabel = names[i], names[j]
            reference, where = _reference(estimator, frame)
            if p > 2:
                others = "the other feature" if p == 3 else f"the other {p - 2} features"
                note = (
                    f"{names[i]} and {names[j]}; {others} held at their {where}: the "
                    "model's regions and class densities on that slice"
                )
            else:
                note = None
            if p > 2 and features is None:
                note = f"the first two numeric of {p} features, " + note  # type: ignore[operator]

            def points(c: NDArray[Any]) -> Any:
                grid = reference.iloc[np.zeros(c.shape[0], dtype=np.intp)].reset_index(drop=True)
                grid[names[i]] = c[:, 0]
                grid[names[j]] = c[:, 1]
                return grid if hasattr(estimator, "feature_names_in_") else grid.to_numpy()

        Z = np.asarray(Z, dtype=float)
        ok = np.all(np.isfinite(Z), axis=1)
        if not ok.any():
            raise ValueError("no point has finite values in the plane drawn.")
        lo, hi = Z[ok].min(axis=0), Z[ok].max(axis=0)
        pad = 0.08 * np.where(hi > lo, hi - lo, 1.0)
        # non-negative data stay so: count models have no density below zero
        start = np.where(lo >= 0, np.maximum(lo - pad, 0.0), lo - pad)
        gx = np.linspace(start[0], hi[0] + pad[0], grid_resolution)
        gy = np.linspace(start[1], hi[1] + pad[1], grid_resolution)
        xx, yy = np.meshgrid(gx, gy)
        grid = points(np.column_stack([xx.ravel(), yy.ravel()]))
        classes = estimator.classes_
        with _quiet_names():
            pred = estimator.predict(grid)
            log_density = np.asarray(estimator.class_log_density(grid), dtype=float)
        regions = np.searchsorted(classes, pred).reshape(xx.shape)
        log_density = log_density.T.reshape(classes.size, *xx.shape)
        means = np.full((classes.size, 2), np.nan)
        covariances = np.full((classes.size, 2, 2), np.nan)
        if p == 2 and projection == "features":
            # the plane is the model's whole space: its Gaussians are drawn exactly
            order = [i, j]
            for c in np.flatnonzero(np.asarray(estimator.class_count_) > 0):
                own = _gaussian_moments(estimator.class_model(classes[c]))
                if own is not None:
                    means[c] = own[0][order]
                    covariances[c] = own[1][np.ix_(order, order)]
        disp = cls(
            xx=xx,
            yy=yy,
            regions=regions,
            classes=classes,
            X=Z,
            y=ya,
            means=means,
            covariances=covariances,
            log_density=log_density,
            xlabel=xlabel,
            ylabel=ylabel,
            title=f"Decision regions of {name}",
            note=note,
        )
        disp.plane_ = plane
        return disp.plot(ax=ax, **plot_kwargs)

    def plot(
        self,
        ax: Any = None,
        *,
        n_std: float = 2.0,
        alpha: float = 0.22,
        max_points: int = 2000,
    ) -> DecisionRegionsDisplay:
        """Draw on ``ax`` (a new figure when None); returns ``self`` with ``ax_``, ``figure_``.

        Gaussian class models get their ``n_std``-sigma ellipse (solid), the
        others the contour of their log density holding the same share of the
        density on the grid (dashed), ``1 - exp(-n_std²/2)``.

        At most ``max_points`` points are drawn: a random sample of the rows
        (seeded, keeping at least 30 rows of every class), in random order so
        that no class hides another; beyond 300 points they are drawn smaller
        and translucent. ``shown_`` holds the indices of the rows drawn, and
        the title says how many when some are left out.
        """
        from matplotlib.colors import ListedColormap
        from matplotlib.lines import Line2D
        from matplotlib.patches import Ellipse

        ax = _axes(ax, (7.0, 5.8))
        K = self.classes.size
        colours = _colours(K)
        mass = gaussian_mass(n_std)
        ax.contourf(
            self.xx,
            self.yy,
            self.regions,
            levels=np.arange(K + 1) - 0.5,
            cmap=ListedColormap(colours),
            alpha=alpha,
        )
        ax.contour(
            self.xx, self.yy, self.regions, levels=np.arange(K) + 0.5, colors="0.3", linewidths=0.6
        )
        self.levels_ = np.full(K, np.nan)
        self.ellipses_: list[Any] = [None] * K
        self.contours_: list[Any] = [None] * K
        handles = []
        shown = _thinned(self.y, max_points)
        self.shown_ = shown
        m = shown.size
        # thousands of points hide the regions: smaller, translucent, in random order
        fade = 1.0 if m <= 300 else math.sqrt(300 / m)
        which = np.searchsorted(self.classes, self.y[shown])
        known = (which < K) & (self.classes[np.minimum(which, K - 1)] == self.y[shown])
        pts, which = self.X[shown][known], which[known]
        ax.scatter(
            pts[:, 0],
            pts[:, 1],
            s=14 * max(fade, 0.35),
            c=[colours[k] for k in which],
            alpha=max(fade, 0.3),
            edgecolors="0.15",
            linewidths=0.3 * fade,
        )
        for k, c in enumerate(self.classes):
            handles.append(
                Line2D([], [], marker="o", ls="", color=colours[k], mec="0.15", label=str(c))
            )
            mean, cov = self.means[k], self.covariances[k]
            if np.all(np.isfinite(cov)) and np.all(np.isfinite(mean)):
                vals, vecs = np.linalg.eigh(cov)
                vals = np.clip(vals, 0.0, None)
                angle = float(np.degrees(np.arctan2(vecs[1, -1], vecs[0, -1])))
                self.ellipses_[k] = ax.add_patch(
                    Ellipse(
                        (float(mean[0]), float(mean[1])),
                        2 * n_std * math.sqrt(vals[-1]),
                        2 * n_std * math.sqrt(vals[0]),
                        angle=angle,
                        fill=False,
                        ec=colours[k],
                        lw=2.0,
                    )
                )
                ax.plot(*mean, marker="X", ms=11, color=colours[k], mec="black", mew=1.2)
            elif self.log_density is not None:
                surface = np.ma.masked_invalid(self.log_density[k])
                level = density_level(self.log_density[k], mass)
                # a level at the bottom of the window encloses all of it: no line to draw
                if np.isfinite(level) and surface.min() < level < surface.max():
                    self.levels_[k] = level
                    self.contours_[k] = ax.contour(
                        self.xx,
                        self.yy,
                        surface,
                        levels=[level],
                        colors=[colours[k]],
                        linewidths=2.0,
                        linestyles="dashed",
                    )
        if any(e is not None for e in self.ellipses_):
            handles.append(
                Line2D(
                    [], [], marker="X", ls="", color="white", mec="black", ms=10, label="model mean"
                )
            )
            handles.append(
                Line2D([], [], color="0.2", lw=2.0, label=f"{n_std:g}σ ellipse of the model")
            )
        if any(c is not None for c in self.contours_):
            handles.append(
                Line2D(
                    [], [], color="0.2", lw=2.0, ls="--", label=f"model density, {mass:.0%} region"
                )
            )
        ax.legend(handles=handles, title="class", loc="best", fontsize="small", framealpha=0.85)
        ax.set_xlabel(self.xlabel)
        ax.set_ylabel(self.ylabel)
        ax.set_xlim(self.xx.min(), self.xx.max())
        ax.set_ylim(self.yy.min(), self.yy.max())
        title = self.title
        note = self.note
        if m < self.y.size:
            thinned = f"{m:,} of {self.y.size:,} rows drawn, at random"
            note = thinned if note is None else f"{note}; {thinned}"
        if note is not None:  # wrapped, so that a long note is never cut at the edges
            title += "\n" + textwrap.fill(f"({note})", width=80)
        ax.set_title(title, fontsize="medium")
        self.ax_, self.figure_ = ax, ax.figure
        return self


def _thinned(y: NDArray[Any], max_points: int, per_class: int = 30) -> NDArray[np.intp]:
    """Indices of at most ``max_points`` rows (more only to keep ``per_class`` of each class).

    A seeded random sample, so that the picture is the same every time; a
    class with few rows keeps up to ``per_class`` of them. The indices come
    in random order (points drawn later cover earlier ones).
    """
    rng = np.random.default_rng(0)
    n = y.size
    if n <= max_points:
        return np.asarray(rng.permutation(n), dtype=np.intp)
    chosen = np.zeros(n, dtype=bool)
    chosen[rng.choice(n, size=max_points, replace=False)] = True
    _, inverse = np.unique(y, return_inverse=True)
    for k in range(int(inverse.max()) + 1):
        rows = np.flatnonzero(inverse == k)
        short = min(per_class, rows.size) - int(chosen[rows].sum())
        if short > 0:
            chosen[rng.choice(rows[~chosen[rows]], size=short, replace=False)] = True
    return np.asarray(rng.permutation(np.flatnonzero(chosen)), dtype=np.intp)


def _as_frame(X: Any, estimator: Any, feature_names: list[str] | None) -> Any:
    """``X`` as a DataFrame named by the model's features (kept as it is when it is one)."""
    import pandas as pd

    if hasattr(X, "columns") and hasattr(X, "iloc"):
        return X.reset_index(drop=True)
    Xa = np.asarray(X, dtype=float)
    if Xa.ndim != 2:
        raise ValueError(f"X must be 2-D; got shape {Xa.shape}.")
    names = feature_names or [str(n) for n in getattr(estimator, "feature_names_in_", [])]
    if len(names) != Xa.shape[1]:
        names = [f"feature {j + 1}" for j in range(Xa.shape[1])]
    return pd.DataFrame(Xa, columns=names)


def _is_number(series: Any) -> bool:
    return bool(series.dtype.kind in "biuf")


def _numeric(frame: Any, what: str) -> NDArray[Any]:
    bad = [str(c) for c in frame.columns if not _is_number(frame[c])]
    if bad:
        raise ValueError(
            f"{what} needs numeric features; {', '.join(repr(c) for c in bad[:5])} are not: "
            "choose two features instead."
        )
    return np.asarray(frame.to_numpy(dtype=float))


def _frame_like(values: NDArray[Any], frame: Any) -> Any:
    import pandas as pd

    return pd.DataFrame(values, columns=frame.columns)


def _column_index(key: Any, names: list[str]) -> int:
    if isinstance(key, str) and key in names:
        return names.index(key)
    if isinstance(key, (int, np.integer)) and -len(names) <= int(key) < len(names):
        return int(key) % len(names)
    raise ValueError(f"no feature {str(key)!r}; the model's features are {', '.join(names[:20])}.")


def _fisher_directions(
    estimator: Any,
) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any]] | None:
    """``(xbar_, scalings_, covariance_)`` of a model with at least 2 Fisher directions."""
    S = getattr(estimator, "scalings_", None)
    xbar = getattr(estimator, "xbar_", None)
    cov = getattr(estimator, "covariance_", None)
    if S is None or xbar is None or cov is None or not hasattr(estimator, "transform"):
        return None
    S = np.asarray(S, dtype=float)
    if S.ndim != 2 or S.shape[1] < 2:
        return None
    return np.asarray(xbar, dtype=float), S, np.asarray(cov, dtype=float)


def _class_moments(
    estimator: Any,
) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any]] | None:
    """Class weights, means and the pooled covariance of a model's Gaussian class models.

    The pooled covariance is the class covariances (the model's own:
    regularised, diagonal for naive Bayes) averaged with the training class
    weights. None when a class model has no mean and covariance.
    """
    counts = np.asarray(getattr(estimator, "class_count_", []), dtype=float)
    present = np.flatnonzero(counts > 0)
    means, covs = [], []
    for k in present:
        moments = _gaussian_moments(estimator.class_model(estimator.classes_[k]))
        if moments is None:
            return None
        means.append(moments[0])
        covs.append(moments[1])
    if len(means) < 2:
        return None
    w = counts[present]
    pooled = np.einsum("k,kij->ij", w / w.sum(), np.stack(covs))
    return w, np.vstack(means), pooled


def _data_moments(
    X: NDArray[Any], y: NDArray[Any]
) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any]]:
    """Class weights, means and the pooled within-class covariance of the rows drawn."""
    ok = np.all(np.isfinite(X), axis=1)
    X, y = X[ok], y[ok]
    classes, inverse = np.unique(y, return_inverse=True)
    if classes.size < 2:
        raise ValueError(
            f"the Fisher plane needs at least 2 classes among the rows drawn; got {classes.size}."
        )
    w = np.bincount(inverse).astype(float)
    onehot = np.zeros((y.size, classes.size))
    onehot[np.arange(y.size), inverse] = 1.0
    means = (onehot.T @ X) / w[:, None]
    resid = X - means[inverse]
    pooled = resid.T @ resid / max(y.size - classes.size, 1)
    return w, means, pooled


def _fisher_plane(
    weights: NDArray[Any], means: NDArray[Any], pooled: NDArray[Any]
) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any], bool]:
    """``(centre, directions, pooled covariance, spread)`` of the Fisher plane of class moments.

    The directions ``S`` solve ``B s = λ W s`` (``B``: the weighted scatter
    of the class means about their weighted centre, ``W``: the pooled
    covariance) with ``Sᵀ W S = I``, largest ``λ`` first; features are
    scaled to unit within-class variance first, so units do not matter.
    With two classes there is one discriminant: the second axis is then the
    direction in which the classes spread most, ``W``-orthogonal to it
    (``spread`` is then True).
    """
    from scipy.linalg import eigh

    w = weights / weights.sum()
    centre = w @ means
    D = means - centre
    B = (D * w[:, None]).T @ D
    scale = np.sqrt(np.clip(np.diag(pooled), 0.0, None))
    scale[~(scale > 0)] = 1.0
    outer = np.outer(scale, scale)
    Ws = pooled / outer + 1e-10 * np.eye(pooled.shape[0])  # a constant feature is no singularity
    Bs = B / outer
    vals, vecs = eigh(Bs, Ws)
    order = np.argsort(vals)[::-1]
    vals, vecs = vals[order], vecs[:, order]
    rank = int(np.sum(vals > 1e-10 * max(float(vals[0]), 1e-300)))
    if rank == 0:
        raise ValueError("no Fisher plane: the class means coincide; choose two features instead.")
    spread = rank < 2
    if spread:
        first = vecs[:, :1]
        # the within-class principal direction, made W-orthogonal to the discriminant
        _, pcs = np.linalg.eigh(Ws)
        u = pcs[:, -1:] - first @ (first.T @ Ws @ pcs[:, -1:])
        if float(np.linalg.norm(u)) < 1e-12:
            u = pcs[:, -2:-1] - first @ (first.T @ Ws @ pcs[:, -2:-1])
        u /= np.sqrt((u.T @ Ws @ u).item())
        vecs = np.hstack([first, u])
    else:
        vecs = vecs[:, :rank]
    return centre, vecs / scale[:, None], pooled, spread


def _reference(estimator: Any, frame: Any) -> tuple[Any, str]:
    """The point the other features are held at: the training means, and how they were found.

    The class means of the model's Gaussian class models weighted by the
    training class weights, when it has them; else the means (numbers) and
    most frequent values (other columns) of the data drawn.
    """
    counts = np.asarray(getattr(estimator, "class_count_", []), dtype=float)
    means: list[NDArray[Any]] = []
    for k in np.flatnonzero(counts > 0):
        mean = getattr(estimator.class_model(estimator.classes_[k]), "mean", None)
        if mean is None:
            means = []
            break
        means.append(np.asarray(mean, dtype=float).reshape(-1))
    row = frame.iloc[:1].copy().reset_index(drop=True)
    if means and all(m.size == frame.shape[1] for m in means):
        w = counts[counts > 0]
        centre = (w[:, None] * np.vstack(means)).sum(axis=0) / w.sum()
        for j, c in enumerate(frame.columns):
            row[c] = centre[j]
        return row, "training means"
    kinds = getattr(estimator, "kinds_", None)
    if kinds is None or len(kinds) != frame.shape[1]:
        kinds = ["gaussian" if frame[c].dtype.kind == "f" else "other" for c in frame.columns]
    for c, kind in zip(frame.columns, kinds, strict=True):
        col = frame[c]
        if kind in ("gaussian", "kernel"):
            row[c] = float(np.nanmean(col.to_numpy(dtype=float)))
        else:  # counts, categories, booleans: a value the column can take
            mode = col.mode(dropna=True)
            row[c] = mode.iloc[0] if len(mode) else col.iloc[0]
    return row, "means in the data drawn (most frequent values for counts and categories)"


@contextlib.contextmanager
def _quiet_names() -> Iterator[None]:
    """The grid is built with the model's column names; quiet the check of bare arrays."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="X does not have valid feature names")
        warnings.filterwarnings("ignore", message="X has feature names")
        yield


# --------------------------------------------------------------------- confusion matrix
class ConfusionMatrixDisplay:
    """The row-normalised confusion matrix as a heatmap.

    Row ``i`` holds the share of the samples of true class ``labels[i]``
    predicted as each class, so each row sums to 1 and the diagonal is the
    per-class recall.

    Attributes
    ----------
    matrix : ndarray of shape (n_classes, n_classes)
        Row-normalised (rows of classes absent from ``y_true`` are zero).
    counts : ndarray of shape (n_classes, n_classes)
        The raw counts.
    labels : ndarray of shape (n_classes,)
    accuracy : float
    """

    def __init__(
        self, *, counts: NDArray[Any], labels: NDArray[Any], title: str = "Confusion matrix"
    ) -> None:
        self.counts = np.asarray(counts)
        self.labels = np.asarray(labels)
        rows = self.counts.sum(axis=1, keepdims=True)
        self.matrix = self.counts / np.where(rows > 0, rows, 1)
        total = self.counts.sum()
        self.accuracy = float(np.trace(self.counts) / total) if total else float("nan")
        self.title = title

    @classmethod
    def from_predictions(
        cls,
        y_true: ArrayLike,
        y_pred: ArrayLike,
        *,
        labels: ArrayLike | None = None,
        title: str = "Confusion matrix",
        ax: Any = None,
        **plot_kwargs: Any,
    ) -> ConfusionMatrixDisplay:
        """Compute the matrix from true and predicted labels and draw it."""
        from sklearn.metrics import confusion_matrix

        yt, yp = np.asarray(y_true), np.asarray(y_pred)
        lab = np.unique(np.concatenate([yt, yp])) if labels is None else np.asarray(labels)
        disp = cls(counts=confusion_matrix(yt, yp, labels=lab), labels=lab, title=title)
        return disp.plot(ax=ax, **plot_kwargs)

    @classmethod
    def from_estimator(
        cls, estimator: Any, X: ArrayLike, y: ArrayLike, *, ax: Any = None, **plot_kwargs: Any
    ) -> ConfusionMatrixDisplay:
        """Predict ``X`` with a fitted estimator and draw the confusion matrix against ``y``."""
        title = plot_kwargs.pop("title", f"Confusion matrix of {type(estimator).__name__}")
        return cls.from_predictions(
            y, estimator.predict(X), labels=estimator.classes_, title=title, ax=ax, **plot_kwargs
        )

    def plot(
        self, ax: Any = None, *, cmap: str = "Blues", annotate: bool | None = None
    ) -> ConfusionMatrixDisplay:
        """Draw the heatmap with a colour bar; cells are annotated up to 20 classes.

        Each cell shows the share of the true class and, up to 10 classes, the
        count in parentheses.
        """
        ax = _axes(ax, (6.4, 5.6))
        K = self.labels.size
        im = ax.imshow(self.matrix, cmap=cmap, vmin=0.0, vmax=1.0)
        if ax.figure.get_layout_engine() is not None:
            # a layout engine places the bar itself; fraction/pad would push the
            # y-label out of the figure
            cbar = ax.figure.colorbar(im, ax=ax, shrink=0.85)
        else:
            cbar = ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
        cbar.set_label("share of the true class")
        if annotate is None:
            annotate = K <= 20
        if annotate:
            size = "small" if K <= 10 else "x-small"
            for i in range(K):
                for j in range(K):
                    v, n = self.matrix[i, j], int(self.counts[i, j])
                    ax.text(
                        j,
                        i,
                        (f"{v:.2f}\n({n:,})" if K <= 10 else f"{v:.2f}") if n else "0",
                        ha="center",
                        va="center",
                        fontsize=size,
                        color="white" if v > 0.55 else "black",
                    )
        ticks = np.arange(K)
        ax.set_xticks(ticks, [str(c) for c in self.labels], rotation=45 if K > 10 else 0)
        ax.set_yticks(ticks, [str(c) for c in self.labels])
        ax.set_xlabel("predicted class")
        ax.set_ylabel("true class")
        ax.set_title(
            f"{self.title}\naccuracy {self.accuracy:.2%}, rows normalised", fontsize="medium"
        )
        self.ax_, self.figure_, self.im_ = ax, ax.figure, im
        return self


# --------------------------------------------------------------------- generated samples
def grey_scale(estimator: Any, labels: ArrayLike, samples: ArrayLike) -> tuple[float, float]:
    """The grey scale of generated images: ``(vmin, vmax)``.

    The range of the class models' means (``class_model(label).mean``) when
    they have them, so that a background of zeros is white; else the
    samples' 1-99 % range.
    """
    means = []
    for label in np.atleast_1d(np.asarray(labels)):
        mean = getattr(estimator.class_model(label), "mean", None)
        if mean is None:
            break
        means.append(np.asarray(mean, dtype=float).ravel())
    else:
        if means and np.ptp(np.concatenate(means)) > 0:
            values = np.concatenate(means)
            return float(values.min()), float(values.max())
    lo, hi = np.percentile(np.asarray(samples, dtype=float), [1, 99])
    return float(lo), float(hi)


class SampleGridDisplay:
    """Images generated by the model: one row per class, ``n_per_class`` columns.

    Attributes
    ----------
    images : ndarray of shape (n_classes, n_per_class, height, width)
    labels : ndarray of shape (n_classes,)
    vmin, vmax : float
        The grey scale (:func:`grey_scale`): the range of the class models'
        means when they have them (so that a background of zeros is white),
        else the samples' 1-99 %.
    """

    def __init__(
        self,
        *,
        images: NDArray[Any],
        labels: NDArray[Any],
        vmin: float,
        vmax: float,
        title: str = "Generated samples",
    ) -> None:
        self.images, self.labels = images, labels
        self.vmin, self.vmax, self.title = vmin, vmax, title

    @classmethod
    def from_estimator(
        cls,
        estimator: Any,
        *,
        n_per_class: int = 10,
        classes: ArrayLike | None = None,
        image_shape: tuple[int, int] | None = None,
        random_state: Any = 0,
        ax: Any = None,
        **plot_kwargs: Any,
    ) -> SampleGridDisplay:
        """Draw ``n_per_class`` samples of each class with ``estimator.sample``.

        Parameters
        ----------
        estimator : fitted bayesrule estimator
        n_per_class : int
        classes : array-like, optional
            The classes to show; default all with data.
        image_shape : (height, width), optional
            Default: square images when the number of features is a square.
        random_state : None, int or Generator
        """
        p = int(estimator.n_features_in_)
        shape = image_shape or image_shape_for(p, minimum=1)
        if shape is None or shape[0] * shape[1] != p:
            raise ValueError(
                f"cannot show {p} features as images of shape {shape}; pass image_shape=(h, w) "
                "with h * w equal to the number of features."
            )
        if classes is None:
            labels = estimator.classes_[np.asarray(estimator.class_count_) > 0]
        else:
            labels = np.atleast_1d(np.asarray(classes))
        y = np.repeat(labels, n_per_class)
        Xs, _ = estimator.sample(y.size, y=y, random_state=random_state)
        images = Xs.reshape(labels.size, n_per_class, *shape)
        vmin, vmax = grey_scale(estimator, labels, Xs)
        title = f"{n_per_class} generated samples per class ({type(estimator).__name__})"
        disp = cls(images=images, labels=labels, vmin=vmin, vmax=vmax, title=title)
        return disp.plot(ax=ax, **plot_kwargs)

    def plot(self, ax: Any = None, *, cmap: str = "gray_r") -> SampleGridDisplay:
        """Draw the images as one mosaic with class labels on the rows."""
        K, n, h, w = self.images.shape
        ax = _axes(ax, (max(4.0, 0.75 * n + 1.5), max(3.0, 0.75 * K + 1.0)))
        gap = max(1, h // 10)
        mosaic = np.full((K * (h + gap) - gap, n * (w + gap) - gap), np.nan)
        for k in range(K):
            for j in range(n):
                mosaic[k * (h + gap) : k * (h + gap) + h, j * (w + gap) : j * (w + gap) + w] = (
                    self.images[k, j]
                )
        from matplotlib import colormaps

        cm = colormaps[cmap].with_extremes(bad="#d9e4f0")  # the gaps: a pale blue frame
        im = ax.imshow(
            np.clip(mosaic, self.vmin, self.vmax),
            cmap=cm,
            vmin=self.vmin,
            vmax=self.vmax,
            interpolation="nearest",
        )
        ax.set_yticks(
            [k * (h + gap) + h / 2 - 0.5 for k in range(K)], [str(c) for c in self.labels]
        )
        ax.set_xticks(
            [j * (w + gap) + w / 2 - 0.5 for j in range(n)], [str(j + 1) for j in range(n)]
        )
        ax.tick_params(length=0)
        ax.set_ylabel("class")
        ax.set_xlabel("sample")
        ax.set_title(self.title, fontsize="medium")
        for side in ax.spines.values():
            side.set_visible(False)
        self.ax_, self.figure_, self.im_ = ax, ax.figure, im
        return self
