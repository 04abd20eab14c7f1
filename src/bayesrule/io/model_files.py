"""Save, load and read the metadata of model files (the format: ``docs/model-files.md``)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .._util.atomic import remove_abandoned, staged
from .archive import _Archive, write_zip
from .constants import FORMAT_NAME, FORMAT_VERSION, MAX_MODEL_BYTES, METADATA, ModelFileError
from .decode import _Decoder
from .encode import _Writer
from .metadata import _canonical, _library_version, _sha256
from .schema import _estimator_classes, _stats_classes, stats_type_of

__all__ = ["load", "read_metadata", "save"]


# --------------------------------------------------------------------------- save
def save(
    model: Any, path: str | os.PathLike[str], *, metadata: dict[str, Any] | None = None
) -> Path:
    """Write a fitted bayesrule estimator to a model file, atomically.

    The file is first written in full to a temporary file
    ``.{name}.tmp-XXXXXXXX`` in the same directory and then renamed over
    ``path``, so an interrupted save leaves either the old file or none,
    never half a model. Temporary files that earlier, interrupted saves to
    the same path left behind are removed.

    Parameters
    ----------
    model : fitted bayesrule estimator
        Its constructor parameters must be numbers, strings, booleans, None,
        lists or arrays (an object such as ``covariance_estimator`` is refused).
    path : str or path-like
        Where to write; an existing file is replaced. The suffix ``.bayesrule``
        is customary but not required.
    metadata : dict, optional
        Extra JSON-serialisable information kept with the model (for instance
        an image shape); :func:`read_metadata` returns it under ``"extra"``.

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    ModelFileError
        When the model is not a fitted bayesrule estimator or holds something
        the format cannot store; the message names the parameter.
    """
    path = Path(path)
    classes = _estimator_classes()
    name = type(model).__name__
    if classes.get(name) is not type(model):
        raise ModelFileError(
            f"cannot save a {name}: only bayesrule estimators ({', '.join(classes)}) can be saved."
        )
    if not hasattr(model, "stats_"):
        raise ModelFileError(f"cannot save an unfitted {name}; fit it first.")
    if not path.parent.is_dir():
        raise ModelFileError(f"{path}: the directory {path.parent} does not exist.")
    if path.exists() and not path.is_file():
        # replacing it would destroy what is there (a device such as /dev/null,
        # a pipe, a directory): a model file is only ever written as a new
        # regular file or over one
        raise ModelFileError(f"{path}: exists and is not a regular file; choose another path.")

    writer = _Writer(_stats_classes())
    # an estimator may keep a description instead of an object it no longer
    # needs (RDA-CV's cv splitter: see its file_params)
    values = model.file_params()
    params = {k: writer.encode(v, f"params.{k}") for k, v in values.items()}
    stats = writer.encode(model.stats_, "stats")
    names = getattr(model, "feature_names_in_", None)
    meta: dict[str, Any] = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "bayesrule_version": _library_version(),
        "estimator": name,
        "params": params,
        "stats": stats,
        "n_features_in": int(model.n_features_in_),
        "feature_names_in": None if names is None else writer.encode(names, "feature_names_in"),
        "extra": metadata or {},
    }
    meta["members"] = {m: _sha256(data) for m, data in sorted(writer.members.items())}
    try:
        meta["checksum"] = _sha256(_canonical(meta))
    except (TypeError, ValueError) as exc:
        raise ModelFileError(f"metadata cannot be written as JSON: {exc}") from None
    payload = {METADATA: json.dumps(meta, indent=1, sort_keys=True).encode(), **writer.members}
    remove_abandoned(path)
    _atomic_write_zip(path, payload)
    return path


def _atomic_write_zip(path: Path, members: dict[str, bytes]) -> None:
    """Write the archive to a temporary beside ``path`` and rename it over ``path``.

    The temporary is locked until the rename (so that another save never takes
    it for an abandoned one) and synced to disk with its directory.
    """
    with staged(path, lock=True, durable=True) as files, open(files[path], "wb") as fh:
        write_zip(fh, members)


# --------------------------------------------------------------------------- load
def read_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The verified metadata of a model file, without rebuilding the model.

    The archive and ``metadata.json`` are checked as by :func:`load` (the
    arrays are not read). Returns a dict with at least ``estimator``,
    ``format_version``, ``bayesrule_version``, ``n_features_in`` and
    ``extra`` (what was passed to :func:`save` as ``metadata``).
    """
    with _Archive(path, MAX_MODEL_BYTES) as archive:
        return archive.meta


def load(path: str | os.PathLike[str], *, max_bytes: int = MAX_MODEL_BYTES) -> Any:
    """Read a model file written by :func:`save`; loading never runs code.

    The whole file is checked against the format (``docs/model-files.md``)
    before anything is built from it: only a regular file is opened, every
    member's declared size is checked before it is read, and every array's
    dtype, shape and values against what the estimator's statistics declare.

    Parameters
    ----------
    path : str or path-like
    max_bytes : int, default=MAX_MODEL_BYTES (4 GiB)
        The largest total uncompressed size of the arrays accepted.

    Returns
    -------
    estimator
        A fitted estimator whose ``predict_proba`` is identical to the saved one's.

    Raises
    ------
    ModelFileError
        (a ``ValueError``) for a missing file or one that is not a regular
        file, a pickle or any file that is not a bayesrule model, a truncated
        or edited file, one over the format's limits, arrays of the wrong
        dtype, shape or values, or a file written in a newer format version;
        the message names the file and the problem.
    """
    with _Archive(path, max_bytes) as archive:
        p, meta = archive.path, archive.meta
        name = meta["estimator"]
        classes = _estimator_classes()
        cls = classes.get(name)
        if cls is None:
            raise archive.fail(
                f"unknown estimator {name!r}; this bayesrule provides {', '.join(classes)}."
            )
        stats_node = meta["stats"]
        stats_type: type[Any] = stats_type_of(cls)
        # an estimator is fitted from its _stats_type or, by a fit-time choice
        # (the discriminant analyses' moments), from one that extends it, or
        # from another it declares (LDA's pooled scatter, from a Spark fit)
        extended = _stats_classes().get(str(stats_node.get("class")))
        if extended is not None and (
            issubclass(extended, stats_type) or extended in getattr(cls, "other_statistics", ())
        ):
            stats_type = extended
        if stats_node.get("class") != stats_type.__name__:
            raise archive.fail(
                f"{name} is built from {stats_type.__name__}, but the file holds "
                f"{stats_node.get('class')!r} statistics (relabelled as another estimator?)."
            )
        # a file holds every parameter of its estimator (save writes get_params()),
        # and no two estimators share a statistic and the same parameters; a file
        # of an older bayesrule may lack a parameter added since: it gets its default
        allowed = set(cls().get_params(deep=False))
        older = meta.get("bayesrule_version") != _library_version()
        odd = sorted(set(meta["params"]) - allowed)
        if not older:
            odd = sorted(set(meta["params"]) ^ allowed)
        if odd:
            what = "is not a parameter" if odd[0] in meta["params"] else "is missing, a parameter"
            raise archive.fail(
                f"{odd[0]!r} {what} of {name} (relabelled as another estimator?); its "
                f"parameters are {sorted(allowed)}."
            )
        n_features = meta["n_features_in"]
        decoder = _Decoder(archive)
        kwargs = {k: decoder.value(v, f"params.{k}") for k, v in meta["params"].items()}
        for k, v in cls.params_before_added.items():  # not the new default: the saved model
            kwargs.setdefault(k, v)
        stats = decoder.stats(stats_node, "stats", stats_type, {"p": n_features})
        names_node = meta["feature_names_in"]
        names = None if names_node is None else decoder.feature_names(names_node, n_features)
        unused = sorted(set(meta["members"]) - decoder.used)
        if unused:
            raise archive.fail(f"the member {unused[0]} is listed but not used.")
    try:
        if stats.n_features != n_features:
            raise ValueError(
                f"the statistics have {stats.n_features} features, but the metadata "
                f"says {n_features}."
            )
        return cls.from_stats(stats, feature_names_in=names, **kwargs)
    except Exception as exc:
        raise ModelFileError(f"{p}: cannot rebuild {name} from the file: {exc}") from None
