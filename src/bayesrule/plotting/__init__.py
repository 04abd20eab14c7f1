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

from ._base import density_level, gaussian_mass, image_shape_for, require_matplotlib
from ._confusion import ConfusionMatrixDisplay
from ._regions import DecisionRegionsDisplay
from ._samples import SampleGridDisplay, grey_scale

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
