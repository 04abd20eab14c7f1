"""``python -m bayesrule.cli``: the same as the ``bayesrule`` command."""

from . import main

main()
