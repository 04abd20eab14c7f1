"""What the families' modules share to name their arrays and constants."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["LOG_2PI", "Floats"]

#: float64 arrays, the type of almost every parameter of a family
Floats = NDArray[np.float64]

#: ``log(2 pi)``, in every Gaussian density's normalising constant
LOG_2PI = float(np.log(2.0 * np.pi))
