"""The estimator registry: every estimator registered where it is defined, found by itself.

An estimator class in a public module of :mod:`bayesrule.estimators` that
is not registered would drop out of the command line, the model files and
every test parametrised over :func:`~bayesrule.estimators.registry.available`;
this fails instead. A new estimator file is discovered, registered and
exported with no other edit.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
import textwrap

import numpy as np
import pytest

import bayesrule
import bayesrule.estimators as estimators
from bayesrule.estimators import GenerativeClassifier
from bayesrule.estimators.registry import (
    SHORT_NAMES,
    available,
    discover,
    get_estimator,
    register,
    short_name,
    unregister,
)


def _public_modules() -> list[str]:
    return sorted(
        info.name
        for info in pkgutil.iter_modules(estimators.__path__)
        if not info.name.startswith("_")
    )


def test_every_estimator_defined_in_a_public_module_is_registered():
    registered = set(available().values())
    defined = []
    for name in _public_modules():
        module = importlib.import_module(f"bayesrule.estimators.{name}")
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if (
                obj.__module__ == module.__name__
                and issubclass(obj, GenerativeClassifier)
                and not obj.__name__.startswith("_")
            ):
                defined.append(obj)
                assert obj in registered, f"{module.__name__}.{obj.__name__} is not registered"
    assert len(defined) == len(registered) >= 14


def test_short_names_are_unique_and_round_trip():
    models = available()
    assert len(set(models.values())) == len(models)
    assert SHORT_NAMES == {short: cls.__name__ for short, cls in models.items()}
    for short, cls in models.items():
        assert short == short.lower() and short.isidentifier()
        assert short_name(cls) == short
        assert get_estimator(short) is cls
        assert get_estimator(short.upper()) is cls
        assert get_estimator(cls.__name__) is cls


def test_every_registered_estimator_is_exported():
    for cls in available().values():
        assert getattr(estimators, cls.__name__) is cls
        assert getattr(bayesrule, cls.__name__) is cls
        assert cls.__name__ in estimators.__all__
        assert cls.__name__ in bayesrule.__all__


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown model 'nope'; choose one of: .*lda"):
        get_estimator("nope")


def test_a_short_name_is_taken_once():
    class Twin(available()["gnb"]):
        pass

    with pytest.raises(ValueError, match="'gnb' is taken by .*GaussianNB"):
        register("gnb")(Twin)
    with pytest.raises(ValueError, match="lower-case identifier"):
        register("Not Valid")
    assert available()["gnb"].__name__ == "GaussianNB"


def test_a_new_estimator_file_is_discovered_registered_and_fits(tmp_path):
    """A module dropped into the package's path is imported by ``discover`` and registered."""
    (tmp_path / "toy_nb.py").write_text(
        textwrap.dedent(
            '''
            from bayesrule.estimators.gaussian_nb import GaussianNB
            from bayesrule.estimators.registry import register


            @register("toynb")
            class ToyNB(GaussianNB):
                """A Gaussian naive Bayes under another name."""
            '''
        )
    )
    (tmp_path / "_helper.py").write_text("raise RuntimeError('private modules are not imported')\n")
    estimators.__path__.append(str(tmp_path))  # as if the file were in the package
    try:
        names = [m.__name__ for m in discover(estimators.__name__, estimators.__path__)]
        assert "bayesrule.estimators.toy_nb" in names
        assert not any(n.endswith("_helper") for n in names)
        cls = get_estimator("toynb")
        assert cls.__name__ == "ToyNB" and short_name(cls) == "toynb"
        rng = np.random.default_rng(0)
        X, y = rng.normal(size=(40, 3)), np.repeat([0, 1], 20)
        np.testing.assert_allclose(
            cls().fit(X, y).predict_proba(X),
            available()["gnb"]().fit(X, y).predict_proba(X),
            rtol=0,
            atol=0,
        )
    finally:
        estimators.__path__.remove(str(tmp_path))
        unregister("toynb")
        sys.modules.pop("bayesrule.estimators.toy_nb", None)
    assert "toynb" not in available()


def test_the_registry_imports_neither_the_package_nor_model_files():
    source = inspect.getsource(importlib.import_module("bayesrule.estimators.registry"))
    assert "import bayesrule" not in source and "from bayesrule" not in source
    assert "from .. import" not in source and "from ..io" not in source
