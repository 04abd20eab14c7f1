"""Model files: a versioned, non-executable format for fitted estimators.

A bayesrule model file is a zip archive (see ``docs/model-files.md``) holding

* ``metadata.json`` — the format name and version, the library version, the
  estimator's class name and constructor parameters, a description of the
  statistics object, the number (and names) of the features, the SHA-256 of
  every other member and a checksum of the metadata itself;
* ``arrays/*.npy`` — every array, written by NumPy with ``allow_pickle=False``.

Only statistics and parameters are stored. Loading calls
``Estimator.from_stats(Stats(**arrays), **params)``, which derives every
fitted attribute again in exactly the way ``fit`` does, so a loaded model
predicts bit for bit like the saved one. Class names in the file are looked
up in a fixed table of bayesrule classes and never imported, and nothing in a
file is ever unpickled, so loading a file cannot run code.

A file is validated in full before anything is built from it, in the way
NumPy's ``.npy`` reader and ``zipfile`` guard themselves: the path must be a
regular file; every zip member's declared size, flags and compression method
are checked against the limits below before it is read, and it is read by a
bounded reader; the JSON is bounded in size and nesting; every ``.npy``
header is parsed here and its shape times its item size checked against the
member's byte count before any array is allocated; and every array's dtype,
shape and values are checked against what the estimator's statistics
declare (:data:`STATS_SCHEMA`). Anything else is refused with
:class:`ModelFileError`.

The package's modules, from the bottom: :mod:`~bayesrule.io.constants` (the
format's name, version, limits and error), :mod:`~bayesrule.io.schema` (what
each statistic's fields must be), :mod:`~bayesrule.io.metadata` (the JSON and
its checksum), :mod:`~bayesrule.io.arrays` (the ``.npy`` members),
:mod:`~bayesrule.io.archive` (the zip container), :mod:`~bayesrule.io.encode`
and :mod:`~bayesrule.io.decode` (values to and from the JSON nodes) and
:mod:`~bayesrule.io.model_files` (:func:`save`, :func:`load`,
:func:`read_metadata`). Tables are :mod:`bayesrule.io.formats`'s.
"""

from __future__ import annotations

# FORMAT_NAME, MAX_NDIM, METADATA, ArraySpec, NestedSpec, _canonical and _sha256
# stay importable from bayesrule.io as before, outside __all__ (tests reseal edited metadata)
from .constants import (  # noqa: F401
    FORMAT_NAME,
    FORMAT_VERSION,
    MAX_JSON_DEPTH,
    MAX_MEMBERS,
    MAX_METADATA_BYTES,
    MAX_MODEL_BYTES,
    MAX_NDIM,
    MAX_NPY_HEADER_BYTES,
    METADATA,
    ModelFileError,
)
from .metadata import _canonical, _sha256  # noqa: F401
from .model_files import load, read_metadata, save
from .schema import STATS_SCHEMA, ArraySpec, NestedSpec  # noqa: F401

__all__ = [
    "FORMAT_VERSION",
    "MAX_JSON_DEPTH",
    "MAX_MEMBERS",
    "MAX_METADATA_BYTES",
    "MAX_MODEL_BYTES",
    "MAX_NPY_HEADER_BYTES",
    "STATS_SCHEMA",
    "ModelFileError",
    "load",
    "read_metadata",
    "save",
]
