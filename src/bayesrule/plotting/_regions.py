""":class:`DecisionRegionsDisplay`: decision regions in a plane with each class's density."""

from __future__ import annotations

import math
import textwrap
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._base import (
    _axes,
    _colours,
    _gaussian_moments,
    density_level,
    gaussian_mass,
)
from ._plane import (
    _as_frame,
    _class_moments,
    _column_index,
    _data_moments,
    _fisher_directions,
    _fisher_plane,
    _frame_like,
    _is_number,
    _numeric,
    _quiet_names,
    _reference,
    _thinned,
)


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
