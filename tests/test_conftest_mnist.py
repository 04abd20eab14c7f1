"""The suite's MNIST policy: a missing data set skips on a developer's machine,
fails where it is expected, and the message says where it was looked for."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from bayesrule.datasets import find_mnist
from conftest import missing_mnist, mnist_places, pytest_collection_modifyitems


def test_found_data_is_neither_a_skip_nor_a_failure(tmp_path):
    assert missing_mnist(tmp_path, {"CI": "true"}, tmp_path) is None


def test_missing_data_skips_where_nothing_expects_it(tmp_path):
    action, message = missing_mnist(None, {}, tmp_path / "work")
    assert action == "skip"
    assert str(tmp_path / "shared" / "datasets" / "mnist") in message
    assert "BAYESRULE_DATA" in message


@pytest.mark.parametrize(
    "env",
    [{"CI": "true"}, {"CI": "1"}, {"BAYESRULE_REQUIRE_MNIST": "yes"}, {"BAYESRULE_DATA": "X"}],
    ids=["CI=true", "CI=1", "required", "BAYESRULE_DATA"],
)
def test_missing_data_fails_where_it_is_expected(tmp_path, env):
    env = {k: str(tmp_path / "data") if k == "BAYESRULE_DATA" else v for k, v in env.items()}
    action, message = missing_mnist(None, env, tmp_path / "work")
    assert action == "fail"
    assert next(iter(env)) in message  # which setting expected it
    for place in mnist_places(env, tmp_path / "work"):
        assert str(place) in message
    if "BAYESRULE_DATA" in env:
        assert str(tmp_path / "data" / "mnist") in message


@pytest.mark.parametrize("value", ["", "0", "false", "no"])
def test_a_ci_variable_set_to_false_expects_nothing(tmp_path, value):
    action, _ = missing_mnist(None, {"CI": value}, tmp_path)
    assert action == "skip"


def test_the_places_are_those_find_mnist_looks_at(tmp_path, monkeypatch):
    """An empty BAYESRULE_DATA and working directory: find_mnist falls through to the
    source checkout's ../shared, the last place listed."""
    monkeypatch.setenv("BAYESRULE_DATA", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    places = mnist_places({"BAYESRULE_DATA": str(tmp_path / "data")}, tmp_path)
    assert places[:3] == [
        tmp_path / "data",
        tmp_path / "data" / "mnist",
        Path(tmp_path.parent) / "shared" / "datasets" / "mnist",
    ]
    found = find_mnist()
    assert found is None or found == places[-1]


def test_tests_that_use_the_fixture_are_marked_mnist():
    marks: dict[str, list] = {"uses": [], "not": []}

    def item(name, fixtures):
        return SimpleNamespace(
            fixturenames=fixtures, add_marker=lambda m, name=name: marks[name].append(m)
        )

    pytest_collection_modifyitems(None, [item("uses", ["tmp_path", "mnist"]), item("not", ["rng"])])
    assert [m.name for m in marks["uses"]] == ["mnist"]
    assert marks["not"] == []
