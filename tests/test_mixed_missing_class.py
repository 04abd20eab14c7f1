"""MixedNB on a column missing throughout one class: the class gets the column's pooled model."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bayesrule as br

pd = pytest.importorskip("pandas")

KINDS = ["gaussian", "kernel", "poisson", "bernoulli", "categorical"]
NAMES = np.array(["car", "van", "suv", "coupe"], dtype=object)


def _column(kind: str, rng: np.random.Generator, y: np.ndarray) -> pd.Series:
    n = y.size
    if kind in ("gaussian", "kernel"):
        return pd.Series(rng.normal(10 + 2 * y, 2.0).round(1))
    if kind == "poisson":
        return pd.Series(rng.poisson(1 + y), dtype="Int64")
    if kind == "bernoulli":
        return pd.Series(rng.random(n) < 0.3 + 0.1 * y, dtype="boolean")
    return pd.Series(np.array(["a", "b", "c", "d"], dtype=object)[(y + rng.integers(0, 2, n)) % 4])


def _labels(codes: np.ndarray, form: str) -> object:
    if form == "int":
        return codes
    if form == "str":
        return NAMES[codes]
    if form == "pandas-category":
        return pd.Series(pd.Categorical(NAMES[codes]))
    return pd.Series(NAMES[codes], dtype="string")


def _table(kind: str, seed: int, n_classes: int) -> tuple[pd.DataFrame, np.ndarray, int]:
    rng = np.random.default_rng(seed)
    n = 40 * n_classes
    y = rng.permutation(np.arange(n) % n_classes)
    df = pd.DataFrame(
        {
            "room": _column(kind, rng, y),
            "length": rng.normal(4.0 + 0.3 * y, 0.4),
            "doors": rng.poisson(2 + y),
        }
    )
    gone = int(rng.integers(0, n_classes))
    df.loc[y == gone, "room"] = None
    return df, y, gone


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("form", ["int", "str", "pandas-category", "pandas-string"])
@settings(max_examples=3, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**16), n_classes=st.integers(2, 4))
def test_a_column_missing_in_one_class_is_marginalised_with_a_warning(kind, form, seed, n_classes):
    df, codes, gone = _table(kind, seed, n_classes)
    y = _labels(codes, form)
    label = gone if form == "int" else NAMES[gone]
    shown = repr(label) if form != "int" else str(label)
    with pytest.warns(
        UserWarning, match=rf"column 'room' is missing in every row of class {shown}"
    ):
        m = br.MixedNB(columns={"room": kind}).fit(df, y)
    P = m.predict_proba(df)
    assert np.all(np.isfinite(P))
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    # the class's model of the column is the column's model over all classes: the
    # column's term for that class is the log density of a one-class fit of the column
    k = int(np.flatnonzero(m.classes_ == label)[0])
    seen = df["room"].notna().to_numpy()
    blank = df.copy()
    blank["room"] = None
    term = m.predict_joint_log_proba(df[seen])[:, k] - m.predict_joint_log_proba(blank[seen])[:, k]
    one = br.MixedNB(columns={"room": kind}).fit(df.loc[seen, ["room"]], np.zeros(seen.sum()))
    np.testing.assert_allclose(
        term, one.predict_joint_log_proba(df.loc[seen, ["room"]])[:, 0], rtol=1e-9
    )
    # the statistics keep the class's empty column (merging and forgetting stay exact)
    assert np.any(m.stats_.parts[kind].feature_weights[k] == 0)


def test_a_later_block_that_fills_the_class_ends_the_pooling():
    df, y, gone = _table("gaussian", 0, 3)
    with pytest.warns(UserWarning, match="missing in every row"):
        m = br.MixedNB().partial_fit(df, y, classes=[0, 1, 2])
    extra = df[y == gone].copy()
    extra["room"] = np.random.default_rng(1).normal(20, 1, len(extra))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.partial_fit(extra, y[y == gone])
    whole = br.MixedNB().fit(pd.concat([df, extra]), np.r_[y, y[y == gone]])
    np.testing.assert_allclose(m.predict_proba(df), whole.predict_proba(df), rtol=1e-10)


def test_a_column_missing_everywhere_is_refused_naming_it():
    df, y, _ = _table("gaussian", 2, 2)
    df["room"] = np.nan
    with pytest.raises(ValueError, match=r"column 'room' is missing \(NaN\) in every row"):
        br.MixedNB(columns={"room": "gaussian"}).fit(df, y)


def test_kernel_nb_names_a_string_class_that_never_observes_a_feature():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 2))
    y = np.array(["a", "b", "c"] * 10, dtype=object)
    X[y == "b", 1] = np.nan
    with pytest.raises(ValueError, match=r"feature 1 is missing \(NaN\) in every row of class 'b'"):
        br.KernelNB().fit(X, y)


def test_one_warning_per_class_names_all_its_missing_columns():
    rng = np.random.default_rng(5)
    y = np.array(["car", "van", "suv"] * 20, dtype=object)
    df = pd.DataFrame({c: rng.normal(size=60) for c in "abc"})
    df.loc[y == "van", ["a", "c"]] = np.nan
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        br.MixedNB().fit(df, y)
    messages = [str(w.message) for w in caught if "missing in every row" in str(w.message)]
    assert messages == [
        "columns 'a', 'c' are missing in every row of class 'van': they carry no evidence for "
        "that class (the class is given the column's distribution over all classes)."
    ]
