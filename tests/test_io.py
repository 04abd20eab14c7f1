"""Model files: exact round trips for every estimator, and refusal of anything unsafe."""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest

import bayesrule
from bayesrule.estimators.registry import available
from bayesrule.io import FORMAT_VERSION, METADATA, ModelFileError, load, read_metadata, save

ESTIMATORS = sorted(available().items())


def _data(label_kind: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Small non-negative integer data that every family of model accepts
    (Gaussian, count, binary after thresholding, categorical, kernel)."""
    rng = np.random.default_rng(seed)
    n, p = 90, 4
    y_idx = np.repeat(np.arange(3), n // 3)
    X = rng.poisson(1.0 + 2.0 * y_idx[:, None] * np.arange(1, p + 1) / p, size=(n, p)).astype(float)
    labels = {"int": np.array([3, 7, 11]), "str": np.array(["cat", "dog", "emu"])}[label_kind]
    return X, labels[y_idx]


def _fit(cls: type, X: np.ndarray, y: np.ndarray):
    """Every registered estimator fits this data with its defaults; a new model that
    needs other data must say so here, not turn an error into a skip."""
    return cls().fit(X, y)


@pytest.mark.parametrize("label_kind", ["int", "str"])
@pytest.mark.parametrize("short,cls", ESTIMATORS, ids=[s for s, _ in ESTIMATORS])
def test_round_trip_is_exact(tmp_path, short, cls, label_kind):
    X, y = _data(label_kind)
    model = _fit(cls, X, y)
    loaded = load(save(model, tmp_path / f"{short}.bayesrule"))
    assert type(loaded) is cls
    assert np.array_equal(loaded.predict_proba(X), model.predict_proba(X))
    assert np.array_equal(loaded.classes_, model.classes_)
    assert loaded.get_params() == model.get_params()


def test_round_trip_keeps_parameters_and_feature_names(tmp_path):
    pd = pytest.importorskip("pandas")
    X, y = _data("str")
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    model = bayesrule.RegularizedDiscriminantAnalysis(
        alpha=0.25, gamma=0.1, priors=np.array([0.2, 0.3, 0.5])
    ).fit(df, pd.Series(y, dtype=object))
    loaded = load(save(model, tmp_path / "m.bayesrule"))
    assert (loaded.alpha, loaded.gamma) == (0.25, 0.1)
    assert np.array_equal(loaded.priors, model.priors)
    assert loaded.feature_names_in_.tolist() == ["a", "b", "c", "d"]
    assert np.array_equal(loaded.predict_proba(df), model.predict_proba(df))


def test_same_model_gives_same_bytes(tmp_path):
    model = bayesrule.LinearDiscriminantAnalysis().fit(*_data("int"))
    a = save(model, tmp_path / "a.bayesrule").read_bytes()
    b = save(model, tmp_path / "b.bayesrule").read_bytes()
    assert a == b


def test_metadata_is_readable_without_loading(tmp_path):
    model = bayesrule.QuadraticDiscriminantAnalysis().fit(*_data("int"))
    meta = read_metadata(save(model, tmp_path / "m.bayesrule", metadata={"image_shape": [2, 2]}))
    assert (meta["estimator"], meta["format_version"], meta["extra"]) == (
        "QuadraticDiscriminantAnalysis",
        FORMAT_VERSION,
        {"image_shape": [2, 2]},
    )


# ----------------------------------------------------------------- refusing to save
def test_object_parameter_is_refused_by_name(tmp_path):
    from sklearn.covariance import OAS

    X, y = _data("int")
    model = bayesrule.LinearDiscriminantAnalysis(solver="eigen", covariance_estimator=OAS()).fit(
        X, y
    )
    with pytest.raises(ModelFileError, match="params.covariance_estimator holds a OAS"):
        save(model, tmp_path / "m.bayesrule")
    assert not (tmp_path / "m.bayesrule").exists()


def test_unfitted_model_is_refused(tmp_path):
    with pytest.raises(ModelFileError, match="unfitted LinearDiscriminantAnalysis"):
        save(bayesrule.LinearDiscriminantAnalysis(), tmp_path / "m.bayesrule")


def test_foreign_estimator_is_refused(tmp_path):
    from sklearn.naive_bayes import GaussianNB

    with pytest.raises(ModelFileError, match="only bayesrule estimators"):
        save(GaussianNB().fit(*_data("int")), tmp_path / "m.bayesrule")


def test_missing_directory_is_named(tmp_path):
    model = bayesrule.LinearDiscriminantAnalysis().fit(*_data("int"))
    with pytest.raises(ModelFileError, match="does not exist"):
        save(model, tmp_path / "nowhere" / "m.bayesrule")


def test_interrupted_save_leaves_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "m.bayesrule"
    old = save(bayesrule.LinearDiscriminantAnalysis().fit(*_data("int")), path).read_bytes()
    calls = {"n": 0}
    real = zipfile.ZipFile.writestr

    def crash_on_third_member(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt  # a crash part-way through the archive
        return real(self, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "writestr", crash_on_third_member)
    with pytest.raises(KeyboardInterrupt):
        save(bayesrule.QuadraticDiscriminantAnalysis().fit(*_data("int")), path)
    assert path.read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.bayesrule"]


# ----------------------------------------------------------------- refusing to load
def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _write(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def _reseal(meta: dict) -> bytes:
    """Metadata with a correct checksum again, as a forger would write it."""
    body = {k: v for k, v in meta.items() if k != "checksum"}
    canon = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    meta["checksum"] = hashlib.sha256(canon).hexdigest()
    return json.dumps(meta).encode()


@pytest.fixture
def model_file(tmp_path):
    model = bayesrule.LinearDiscriminantAnalysis().fit(*_data("str"))
    return save(model, tmp_path / "good.bayesrule")


class _Trap:
    """Unpickling this creates a marker file: proof that code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def test_pickle_file_is_refused_and_never_run(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "model.pkl"
    path.write_bytes(pickle.dumps(_Trap(marker)))
    with pytest.raises(ModelFileError, match="looks like a Python pickle"):
        load(path)
    assert not marker.exists()


def test_pickled_array_member_is_never_run(tmp_path, model_file):
    marker = tmp_path / "pwned"
    members = _members(model_file)
    buf = io.BytesIO()
    np.save(buf, np.array([_Trap(marker)], dtype=object), allow_pickle=True)
    members["arrays/stats.classes.npy"] = buf.getvalue()
    meta = json.loads(members[METADATA])
    meta["members"]["arrays/stats.classes.npy"] = hashlib.sha256(buf.getvalue()).hexdigest()
    members[METADATA] = _reseal(meta)
    with pytest.raises(ModelFileError, match="cannot be read without pickle"):
        load(_write(tmp_path / "evil.bayesrule", members))
    assert not marker.exists()


def test_extra_pickle_member_is_refused(tmp_path, model_file):
    marker = tmp_path / "pwned"
    members = _members(model_file)
    members["payload.pkl"] = pickle.dumps(_Trap(marker))
    with pytest.raises(ModelFileError, match="unexpected member 'payload.pkl'"):
        load(_write(tmp_path / "evil.bayesrule", members))
    assert not marker.exists()


def test_truncated_file_is_refused(tmp_path, model_file):
    data = model_file.read_bytes()
    path = tmp_path / "cut.bayesrule"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFileError, match="truncated or corrupted"):
        load(path)


def test_edited_metadata_is_refused(tmp_path, model_file):
    members = _members(model_file)
    meta = json.loads(members[METADATA])
    meta["params"]["tol"]["value"] = 0.5
    members[METADATA] = json.dumps(meta).encode()
    with pytest.raises(ModelFileError, match="checksum mismatch in metadata.json"):
        load(_write(tmp_path / "edited.bayesrule", members))


def test_edited_array_is_refused(tmp_path, model_file):
    members = _members(model_file)
    buf = io.BytesIO()
    means = np.load(io.BytesIO(members["arrays/stats.means.npy"]))
    np.save(buf, means + 1.0)
    members["arrays/stats.means.npy"] = buf.getvalue()
    with pytest.raises(ModelFileError, match="checksum mismatch for arrays/stats.means.npy"):
        load(_write(tmp_path / "edited.bayesrule", members))


def test_newer_format_version_is_refused(tmp_path, model_file):
    members = _members(model_file)
    meta = json.loads(members[METADATA])
    meta["format_version"] = FORMAT_VERSION + 1
    members[METADATA] = _reseal(meta)
    with pytest.raises(ModelFileError, match=f"format version {FORMAT_VERSION + 1}.*Upgrade"):
        load(_write(tmp_path / "future.bayesrule", members))


def test_unknown_estimator_name_is_never_imported(tmp_path, model_file):
    members = _members(model_file)
    meta = json.loads(members[METADATA])
    meta["estimator"] = "os.system"
    members[METADATA] = _reseal(meta)
    with pytest.raises(ModelFileError, match="unknown estimator 'os.system'"):
        load(_write(tmp_path / "odd.bayesrule", members))


@pytest.mark.parametrize(
    "content,match",
    [(b"a,b\n1,2\n", "not a bayesrule model file"), (b"", "not a bayesrule model file")],
)
def test_other_files_are_refused(tmp_path, content, match):
    path = tmp_path / "m.bayesrule"
    path.write_bytes(content)
    with pytest.raises(ModelFileError, match=match):
        load(path)


def test_missing_file_is_named(tmp_path):
    with pytest.raises(ModelFileError, match=r"nope\.bayesrule: no such model file"):
        load(tmp_path / "nope.bayesrule")


def test_saved_file_has_ordinary_permissions(model_file):
    umask = os.umask(0)
    os.umask(umask)
    assert model_file.stat().st_mode & 0o777 == 0o666 & ~umask


# ----------------------------------------------------------------- temporary files
def test_next_save_removes_temporaries_of_interrupted_saves(tmp_path):
    path = tmp_path / "m.bayesrule"
    stale = [tmp_path / ".m.bayesrule.tmp-ab12cd_9", tmp_path / ".m.bayesrule.x1y2z3w4.tmp"]
    kept = [
        tmp_path / ".m.bayesrule.backup",  # not a temporary file's name
        tmp_path / ".other.bayesrule.tmp-ab12cd_9",  # another target's
        tmp_path / "m.bayesrule.tmp-ab12cd_9",
    ]
    for p in stale + kept:
        p.write_bytes(b"half a model")
    save(bayesrule.LinearDiscriminantAnalysis().fit(*_data("int")), path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [path.name] + [p.name for p in kept]
    )


@pytest.mark.skipif(os.name == "nt", reason="POSIX file locks")
def test_temporary_of_a_save_in_progress_is_kept(tmp_path):
    import fcntl

    path = tmp_path / "m.bayesrule"
    live = tmp_path / ".m.bayesrule.tmp-inflight"
    with open(live, "wb") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)  # as a save in another process holds it
        save(bayesrule.LinearDiscriminantAnalysis().fit(*_data("int")), path)
        assert live.exists()


def test_temporary_is_named_after_the_target(tmp_path, monkeypatch):
    seen = []
    real = os.replace

    def spy(src, dst):
        seen.append(Path(src).name)
        return real(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    save(bayesrule.LinearDiscriminantAnalysis().fit(*_data("int")), tmp_path / "m.bayesrule")
    assert len(seen) == 1 and seen[0].startswith(".m.bayesrule.tmp-")


@pytest.mark.skipif(os.name == "nt", reason="POSIX file modes")
def test_a_replaced_model_file_keeps_its_permissions(tmp_path):
    path = tmp_path / "m.bayesrule"
    model = bayesrule.LinearDiscriminantAnalysis().fit(*_data("int"))
    save(model, path)
    os.chmod(path, 0o600)  # kept private by its owner
    save(model, path)
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["m.bayesrule"]


def test_save_syncs_the_file_and_its_directory_before_returning(tmp_path, monkeypatch):
    import stat

    synced = []
    real = os.fsync

    def spy(fd):
        synced.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        return real(fd)

    model = bayesrule.LinearDiscriminantAnalysis().fit(*_data("int"))
    monkeypatch.setattr(os, "fsync", spy)
    save(model, tmp_path / "m.bayesrule")
    assert "file" in synced
    if os.name != "nt":
        assert synced[-1] == "dir"  # after the rename


def test_save_refuses_to_replace_what_is_not_a_regular_file(tmp_path):
    X, y = _data("int")
    model = bayesrule.GaussianNB().fit(X, y)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    for target in (fifo, folder):
        with pytest.raises(ModelFileError, match="not a regular file"):
            save(model, target)
    assert fifo.exists() and not fifo.is_file() and folder.is_dir()


def test_a_file_of_an_older_version_lacking_a_new_parameter_gets_its_default(tmp_path):
    X, y = _data("int")
    model = bayesrule.CategoricalNB().fit(X, y)
    members = _members(save(model, tmp_path / "new.bayesrule"))
    meta = json.loads(members[METADATA])
    del meta["params"]["max_categories"]  # a parameter added in a later version
    members[METADATA] = _reseal({**meta, "bayesrule_version": "0.0.1"})
    old = load(_write(tmp_path / "old.bayesrule", members))
    assert old.max_categories == bayesrule.CategoricalNB().max_categories
    np.testing.assert_array_equal(old.predict_proba(X), model.predict_proba(X))
    # the same file claiming this version is refused: a missing parameter is then a sign
    # of a file relabelled as another estimator
    members[METADATA] = _reseal({**meta, "bayesrule_version": bayesrule.__version__})
    with pytest.raises(ModelFileError, match="'max_categories' is missing"):
        load(_write(tmp_path / "odd.bayesrule", members))


@pytest.mark.parametrize(
    "model",
    [
        bayesrule.LinearDiscriminantAnalysis(solver="eigen", shrinkage="auto"),
        bayesrule.QuadraticDiscriminantAnalysis(
            solver="eigen", shrinkage="ledoit-wolf", reg_param=0.01
        ),
    ],
    ids=["lda-auto", "qda-ledoit-wolf"],
)
def test_round_trip_of_models_with_fourth_moments(tmp_path, model):
    X, y = _data("str")
    model.fit(X + np.arange(X.shape[1]), y)
    loaded = load(save(model, tmp_path / "m.bayesrule"))
    assert type(loaded.stats_) is type(model.stats_)
    assert type(model.stats_).__name__ == "FourthMomentStats"
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    # and it keeps streaming with the same statistic
    loaded.partial_fit(X[:5], y[:5])
    assert type(loaded.stats_) is type(model.stats_)


@pytest.mark.parametrize(
    "cls", [bayesrule.RegularizedDiscriminantAnalysis, bayesrule.RegularizedDiscriminantAnalysisCV]
)
def test_a_file_from_before_target_loads_the_model_it_was_fitted_as(tmp_path, cls):
    """A file without ``target`` was fitted with the identity target, not today's default."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(90, 3)) * np.array([1.0, 100.0, 0.01])  # units far apart
    y = np.arange(90) % 3
    params = (
        {"alpha": 0.5, "gamma": 0.3} if cls is bayesrule.RegularizedDiscriminantAnalysis else {}
    )
    model = cls(target="identity", **params).fit(X, y)
    members = _members(save(model, tmp_path / "new.bayesrule"))
    meta = json.loads(members[METADATA])
    del meta["params"]["target"]
    members[METADATA] = _reseal({**meta, "bayesrule_version": "0.0.1"})
    old = load(_write(tmp_path / "old.bayesrule", members))
    assert old.target == "identity" != cls().target
    np.testing.assert_allclose(old.predict_proba(X), model.predict_proba(X), rtol=0, atol=1e-12)
