"""The typer application behind the ``bayesrule`` command.

The application and its global options are in :mod:`._shell`; each command
lives in its own module, imported here in the order ``--help`` lists them.
"""

from __future__ import annotations

# the [cli] extra, first: without it main() says how to install it
import typer  # noqa: F401

# isort: off
from . import _fit  # noqa: F401 (each import registers its commands, in this order)
from . import _predict  # noqa: F401
from . import _evaluate  # noqa: F401
from . import _inspect  # noqa: F401
from . import _plot  # noqa: F401
from . import _demo_command  # noqa: F401

# isort: on
from ._shell import app

__all__ = ["app"]
