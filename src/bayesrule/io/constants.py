"""The model file format's name, version and limits, and its error."""

from __future__ import annotations

import re
import zipfile

#: The format this version writes; it reads every version up to this one.
FORMAT_VERSION = 1
FORMAT_NAME = "bayesrule-model"
METADATA = "metadata.json"

# ----------------------------------------------------------------- the format's limits
#: Largest ``metadata.json``, uncompressed (its declared size is checked before reading).
MAX_METADATA_BYTES = 64 * 2**20
#: Deepest nesting of JSON arrays and objects in ``metadata.json``.
MAX_JSON_DEPTH = 64
#: Most members in one archive.
MAX_MEMBERS = 60_000
#: Default largest total uncompressed size of the arrays (``load(..., max_bytes=)``).
MAX_MODEL_BYTES = 4 * 2**30
#: Largest ``.npy`` header (NumPy's own default limit).
MAX_NPY_HEADER_BYTES = 10_000
#: Most axes of a stored array.
MAX_NDIM = 32

_ZIP_MAGIC = b"PK\x03\x04"
_END_MAGIC = b"PK\x05\x06"
# Members are plain names under arrays/: no directories, no '..', no absolute
# paths, no backslashes, no drive letters.
_MEMBER_NAME = re.compile(r"arrays/[A-Za-z0-9_][A-Za-z0-9_.-]{0,200}\.npy")
_SHA256 = re.compile(r"[0-9a-f]{64}")
# zip flag bits a member may carry: deflate options (1, 2), a data descriptor
# (3) and UTF-8 names (11). Bit 0 (encrypted), 6 (strong encryption), 13
# (masked directory) and every other bit are refused.
_ALLOWED_FLAGS = 0x0002 | 0x0004 | 0x0008 | 0x0800
_COMPRESSIONS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}
# NumPy dtype kinds that np.save writes without pickling: bool, integers,
# floats, complex, byte and unicode strings, datetimes and timedeltas.
_SAFE_KINDS = "biufcSUMm"
# A fixed timestamp makes the same model give the same bytes on every save.
_EPOCH = (1980, 1, 1, 0, 0, 0)
_CHUNK = 1 << 20
_META_KEYS = frozenset(
    {
        "format",
        "format_version",
        "bayesrule_version",
        "estimator",
        "params",
        "stats",
        "n_features_in",
        "feature_names_in",
        "extra",
        "members",
        "checksum",
    }
)
_NODE_KEYS = {
    "value": {"kind", "value"},
    "float": {"kind", "value"},
    "array": {"kind", "member"},
    "list": {"kind", "items"},
    "tuple": {"kind", "items"},
    "dict": {"kind", "items"},
    # a mapping whose keys are not all strings (priors by integer label)
    "pairs": {"kind", "keys", "values"},
    "stats": {"kind", "class", "fields"},
}


class ModelFileError(ValueError):
    """A model file that cannot be written or read; the message names the file."""
