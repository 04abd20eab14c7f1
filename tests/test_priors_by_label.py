"""Priors given by class label (issue #20 item 16), for every estimator that takes priors.

``priors={"Adelie": 0.5, ...}`` (naive Bayes' ``class_prior`` too), or a
pandas Series indexed by label, is the array of the same values in the order
of ``classes_``: the same model, through fit, partial_fit, merge and a model
file. A label left out, a label that is not a class, or a class named twice
is a ValueError naming them.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bayesrule.estimators.registry import available
from bayesrule.io import load, save
from reference_models import has_reference, reference_proba

MODELS = available()


def _prior_name(cls):
    params = cls().get_params()
    return "class_prior" if "class_prior" in params else "priors" if "priors" in params else None


WITH_PRIORS = {s: c for s, c in MODELS.items() if _prior_name(c) is not None}
#: the scores of ComplementNB leave the priors out unless add_prior=True (scikit-learn's rule)
EXTRA = {"cnb": {"add_prior": True}}

rng = np.random.default_rng(3)
X = rng.integers(0, 5, size=(90, 3)).astype(float)
Y_STR = np.array(["Adelie", "Chinstrap", "Gentoo"])[np.arange(90) % 3]
X[Y_STR == "Gentoo"] += 1.0
Y_INT = np.searchsorted(["Adelie", "Chinstrap", "Gentoo"], Y_STR) * 10 + 1  # 1, 11, 21


def _est(short, priors, **more):
    cls = MODELS[short]
    return cls(**{_prior_name(cls): priors}, **EXTRA.get(short, {}), **more)


def _fit(est, X_, y_):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # small classes, collinear counts: not the subject here
        return est.fit(X_, y_)


def test_the_table_covers_every_estimator_with_priors():
    assert set(WITH_PRIORS) == set(MODELS)


def _with_reference(short: str):
    """The model's name, an oracle item where an independent computation exists."""
    if has_reference(short, EXTRA.get(short, {})):
        return pytest.param(short, marks=pytest.mark.oracle)
    return short


def _agrees_with_the_reference(short: str, model, y, priors) -> None:
    """scikit-learn's namesake or a NumPy transcription with the same priors, in class order."""
    reference = reference_proba(short, EXTRA.get(short, {}), X, y, X, priors=priors)
    if reference is not None:
        np.testing.assert_allclose(model.predict_proba(X), reference, rtol=0, atol=1e-9)


@pytest.mark.parametrize("short", [_with_reference(s) for s in WITH_PRIORS])
@pytest.mark.parametrize("labels", ["str", "int"])
def test_a_mapping_is_the_array_in_class_order(short, labels):
    y = Y_STR if labels == "str" else Y_INT
    classes = np.unique(y)
    values = np.array([0.5, 0.2, 0.3])
    # given in an order other than the classes'
    order = [2, 0, 1]
    mapping = {classes[i].item(): values[i] for i in order}
    by_label = _fit(_est(short, mapping), X, y)
    by_position = _fit(_est(short, values), X, y)
    np.testing.assert_allclose(by_label.priors_, values)
    np.testing.assert_array_equal(by_label.predict_proba(X), by_position.predict_proba(X))
    _agrees_with_the_reference(short, by_label, y, values)


@pytest.mark.parametrize("short", [_with_reference(s) for s in WITH_PRIORS])
def test_a_series_indexed_by_label_is_a_mapping_and_a_plain_series_an_array(short):
    values = np.array([0.2, 0.5, 0.3])
    labelled = pd.Series(values[::-1], index=["Gentoo", "Chinstrap", "Adelie"])
    plain = pd.Series(values)
    a = _fit(_est(short, labelled), X, Y_STR)
    b = _fit(_est(short, plain), X, Y_STR)
    np.testing.assert_allclose(a.priors_, values)
    np.testing.assert_allclose(b.priors_, values)
    _agrees_with_the_reference(short, a, Y_STR, values)
    _agrees_with_the_reference(short, b, Y_STR, values)


def test_value_counts_gives_the_class_proportions():
    cls = WITH_PRIORS["gnb"]
    y = np.r_[Y_STR, ["Gentoo"] * 30]
    Xy = np.r_[X, X[:30]]
    est = _fit(cls(priors=pd.Series(y).value_counts(normalize=True)), Xy, y)
    np.testing.assert_allclose(est.priors_, [30 / 120, 30 / 120, 60 / 120])


@pytest.mark.parametrize("short", list(WITH_PRIORS))
@pytest.mark.parametrize(
    ("mapping", "match"),
    [
        ({"Adelie": 0.5, "Gentoo": 0.5}, r"no prior for the classes \['Chinstrap'\]"),
        (
            {"Adelie": 0.4, "Gentoo": 0.3, "chinstrap": 0.3},
            r"no prior for the classes \['Chinstrap'\] and it names labels that are not "
            r"classes: \['chinstrap'\]",
        ),
        (
            {"Adelie": 0.4, "Gentoo": 0.3, "Chinstrap": 0.2, "Emperor": 0.1},
            r"labels that are not classes: \['Emperor'\]. The classes are "
            r"\['Adelie', 'Chinstrap', 'Gentoo'\]",
        ),
        ({"Adelie": 0.4, "Gentoo": 0.3, "Chinstrap": "many"}, r"map each class to a number"),
    ],
)
def test_missing_and_unknown_labels_are_named(short, mapping, match):
    name = _prior_name(MODELS[short])
    with pytest.raises(ValueError, match=rf"{name} .*{match}|{match}"):
        _fit(_est(short, mapping), X, Y_STR)


def test_text_keys_never_stand_for_numeric_labels():
    cls = WITH_PRIORS["lda"]
    with pytest.raises(ValueError, match=r"no prior for the classes \[1, 11, 21\]"):
        _fit(cls(priors={"1": 0.2, "11": 0.3, "21": 0.5}), X, Y_INT)


def test_a_class_named_twice_is_refused():
    cls = WITH_PRIORS["gnb"]
    with pytest.raises(ValueError, match=r"names class 11 more than once"):
        _fit(cls(priors=pd.Series([0.2, 0.3, 0.3, 0.2], index=[1, 11, 11, 21])), X, Y_INT)


@pytest.mark.parametrize(
    "short", [_with_reference(s) for s, c in WITH_PRIORS.items() if hasattr(c, "partial_fit")]
)
def test_partial_fit_uses_the_mapping_on_the_declared_classes(short):
    mapping = {"Gentoo": 0.1, "Adelie": 0.6, "Chinstrap": 0.3}
    est = _est(short, mapping)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.partial_fit(X[:45], Y_STR[:45], classes=["Adelie", "Chinstrap", "Gentoo"])
        est.partial_fit(X[45:], Y_STR[45:])
    whole = _fit(_est(short, mapping), X, Y_STR)
    np.testing.assert_allclose(est.priors_, [0.6, 0.3, 0.1])
    np.testing.assert_allclose(est.predict_proba(X), whole.predict_proba(X), rtol=1e-7, atol=1e-12)
    _agrees_with_the_reference(short, est, Y_STR, [0.6, 0.3, 0.1])


@pytest.mark.parametrize("short", [s for s, c in WITH_PRIORS.items() if hasattr(c, "partial_fit")])
def test_merge_maps_the_united_classes_and_refuses_a_class_the_mapping_lacks(short):
    mapping = {"Gentoo": 0.1, "Adelie": 0.6, "Chinstrap": 0.3}
    every = ["Adelie", "Chinstrap", "Gentoo"]
    first = Y_STR != "Gentoo"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # shards declare every class (as partial_fit does); merge unites their data
        a = _est(short, mapping).partial_fit(X[first], Y_STR[first], classes=every)
        b = _est(short, mapping).partial_fit(X[~first], Y_STR[~first], classes=every)
        merged = a.merge(b)
    whole = _fit(_est(short, mapping), X, Y_STR)
    np.testing.assert_allclose(merged.priors_, [0.6, 0.3, 0.1])
    np.testing.assert_allclose(
        merged.predict_proba(X), whole.predict_proba(X), rtol=1e-7, atol=1e-12
    )
    # a model whose mapping names only its own classes cannot take in another class
    c = _fit(_est(short, {"Adelie": 0.6, "Chinstrap": 0.4}), X[first], Y_STR[first])
    last = Y_STR != "Adelie"
    d = _fit(_est(short, {"Gentoo": 0.5, "Chinstrap": 0.5}), X[last], Y_STR[last])
    with pytest.raises(ValueError, match=r"no prior for the classes \['Gentoo'\]"):
        c.merge(d)


@pytest.mark.parametrize("short", [_with_reference(s) for s in WITH_PRIORS])
@pytest.mark.parametrize("labels", ["str", "int"])
def test_a_model_file_keeps_the_mapping(short, labels, tmp_path):
    y = Y_STR if labels == "str" else Y_INT
    classes = np.unique(y)
    mapping = {classes[i].item(): p for i, p in zip([1, 2, 0], [0.25, 0.35, 0.4], strict=True)}
    est = _fit(_est(short, mapping), X, y)
    save(est, tmp_path / "m.zip")
    loaded = load(tmp_path / "m.zip")
    assert getattr(loaded, _prior_name(MODELS[short])) == mapping
    np.testing.assert_array_equal(loaded.priors_, est.priors_)
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))
    _agrees_with_the_reference(short, loaded, y, [0.4, 0.25, 0.35])


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.floats(0.01, 10.0), min_size=2, max_size=6),
    st.randoms(use_true_random=False),
)
def test_any_order_of_any_mapping_gives_the_normalised_priors(weights, rnd):
    cls = WITH_PRIORS["dlda"]
    k = len(weights)
    y = np.array([f"c{i}" for i in range(k)] * 4)
    Xk = np.random.default_rng(k).normal(size=(y.size, 2))
    keys = [f"c{i}" for i in range(k)]
    rnd.shuffle(keys)
    mapping = {key: weights[int(key[1:])] for key in keys}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = cls(priors=mapping).fit(Xk, y)
    np.testing.assert_allclose(est.priors_, np.array(weights) / np.sum(weights), rtol=1e-12)


def _forged(path, change):
    """The model file at ``path`` with its ``params.priors`` node changed, checksum resealed."""
    import hashlib
    import json
    import zipfile

    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    meta = json.loads(members["metadata.json"])
    change(meta["params"]["priors"])
    body = {k: v for k, v in meta.items() if k != "checksum"}
    canon = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    meta["checksum"] = hashlib.sha256(canon).hexdigest()
    members["metadata.json"] = json.dumps(meta).encode()
    out = path.with_name("forged.zip")
    with zipfile.ZipFile(out, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return out


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda node: node["values"]["items"].pop(), r"3 keys, 2 values"),
        (lambda node: node["keys"]["items"].__setitem__(1, node["keys"]["items"][0]), "twice"),
        (lambda node: node.pop("values"), "malformed pairs entry"),
        (lambda node: node.__setitem__("keys", {"kind": "value", "value": 1}), "must be a list"),
        (
            lambda node: node["keys"].__setitem__(
                "items", [{"kind": "list", "items": []}, *node["keys"]["items"][1:]]
            ),
            "not a label",
        ),
    ],
)
def test_a_forged_mapping_in_a_model_file_is_refused(change, match, tmp_path):
    from bayesrule.io import ModelFileError

    est = _fit(WITH_PRIORS["gnb"](priors={1: 0.2, 11: 0.3, 21: 0.5}), X, Y_INT)
    path = save(est, tmp_path / "m.zip")
    with pytest.raises(ModelFileError, match=match):
        load(_forged(path, change))
