"""Choosing the feature and label columns of a table."""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np

from ..io.formats import (
    hidden_character,
    lone_token,
)
from ..io.table_text import unsupported_message, unsupported_values
from ._dataset import (
    _INDEX_NAMES,
    Columns,
    Dataset,
    UsageError,
    _did_you_mean,
    _labels,
    _some,
    match_columns,
)


# ------------------------------------------------------------------ choosing the columns
def index_column(df: Any) -> str | None:
    """The first column when it is a written-out row index, else None.

    An unnamed first column (pandas writes its index so, R its row names) is
    one; so is a first column named ``index`` that counts the rows from 0 or 1
    (``DataFrame.reset_index``).
    """
    import pandas as pd

    first = str(df.columns[0])
    if first in _INDEX_NAMES or re.fullmatch(r"Unnamed: 0(\.\d+)?", first):
        return first
    if first.lower() == "index" and pd.api.types.is_integer_dtype(df[first]):
        values = df[first].to_numpy()
        n = values.size
        if np.array_equal(values, np.arange(n)) or np.array_equal(values, np.arange(1, n + 1)):
            return first
    return None


def select(
    df: Any,
    source: str,
    target: str | None,
    need_target: bool,
    columns: Columns,
    *,
    missing_target: str = "drop",
) -> Dataset:
    """The features and labels of a table: the one place columns are chosen.

    Rows whose label is missing are dropped (a note says how many) or refused
    (``missing_target="error"``). Without a model's feature list, the
    features are ``columns.features`` (default: every column) less the
    target, ``columns.drop`` and a written-out index column (with a note).
    Models that need numbers get the features as floats; a non-numeric
    column is an error naming it.
    """
    import pandas as pd

    notes: list[str] = []
    names = [str(c) for c in df.columns]
    idx = index_column(df) if columns.model is None else None  # before rows are dropped
    y = None
    if target is not None:
        if target not in names:
            raise UsageError(
                f"{source}: no column {target!r} for --target{_did_you_mean(target, names)}; "
                f"columns are: {_some(names)}."
            )
        missing = df[target].isna().to_numpy()
        if missing.any():
            k = int(missing.sum())
            if missing_target == "error":
                first = int(np.flatnonzero(missing)[0]) + 1
                raise missing_target_error(source, target, f"{k:,} rows (first: row {first})")
            df = df.loc[~missing]  # the index keeps the rows' numbers in the file
            notes.append(missing_target_note(k, target, f" ({df.shape[0]:,} remain)"))
            if df.shape[0] == 0:
                raise UsageError(f"{source}: every row's target {target!r} is missing.")
        y = _labels(df[target].to_numpy(), f"{source}: the target column {target!r}")
    elif need_target:
        raise UsageError(f"{source}: give the label column with --target.")

    if columns.model is not None:
        lacking = [c for c in columns.model if c not in names]
        if lacking:
            raise UsageError(
                f"{source}: the model needs the column(s) {', '.join(lacking[:10])}, which the "
                f"data lack{_did_you_mean(lacking[0], names)}."
            )
        cols = list(columns.model)
    else:
        candidates = [c for c in names if c != target]
        if columns.features:
            cols = match_columns(columns.features, candidates, "--features")
        else:
            cols = candidates
            if idx is not None and idx in cols:
                cols.remove(idx)
                notes.append(
                    f"left out the column {idx!r}: it is a written-out row index "
                    "(give --features to choose the columns)."
                )
        if columns.drop:
            dropped = match_columns(columns.drop, names, "--drop")
            cols = [c for c in cols if c not in dropped]
    if not cols:
        raise UsageError(
            f"{source}: no feature columns left"
            + (f" besides the target {target!r}" if target else "")
            + "."
        )
    for c in cols:  # dates, lists, structs: no model takes them (a model's columns: never)
        what = unsupported_values(df[c])
        if what is not None:
            leave = None if columns.model is not None else "--drop, or --features without it"
            raise UsageError(unsupported_message(source, c, what, leave))
    tokens = {c: t for c in cols if (t := lone_token(df[c])) is not None}
    if columns.numeric:
        # booleans are numbers (0 and 1), their missing cells too (NaN), as streamed
        bad = [c for c in cols if not pd.api.types.is_numeric_dtype(df[c]) and not _booleans(df[c])]
        spoilt = [c for c in bad if c in tokens]
        if spoilt:
            c = spoilt[0]
            raise UsageError(f"{source}: {_token_message(df[c], c, *tokens[c])}")
        if bad:
            hint = (
                "the model was fitted on numbers"
                if columns.model is not None
                else f"leave them out (--drop {','.join(bad[:10])}) or use --model mixed, "
                "which takes text, categories and booleans"
            )
            raise UsageError(
                f"{source}: the column(s) {', '.join(repr(c) for c in bad[:10])} are not "
                f"numeric; {hint}."
            )
        X = df[cols].astype(float)
    else:
        for c, (token, count) in tokens.items():
            warnings.warn(f"{source}: {_token_message(df[c], c, token, count)}", stacklevel=2)
        X = df[cols]
    return Dataset(
        X=X,
        y=y,
        feature_names=cols,
        image_shape=None,
        source=source,
        frame=df,
        notes=notes,
        target=target,
    )


def _booleans(values: Any) -> bool:
    """Whether a column holds booleans and missing values only (pandas' nullable ``boolean``,
    or Python objects: Parquet's booleans with a null)."""
    import pandas as pd

    if pd.api.types.is_bool_dtype(values.dtype):
        return True
    if values.dtype != object:
        return False
    present = values.dropna()
    return bool(len(present)) and all(isinstance(v, (bool, np.bool_)) for v in present)


def missing_target_error(source: str, target: str, where: str, them: str = "them") -> UsageError:
    """``--missing-target error``'s refusal: the rows ``where`` the label is missing."""
    return UsageError(
        f"{source}: the target column {target!r} is missing in {where}; "
        f"--missing-target drop leaves {them} out."
    )


def missing_target_note(k: int, target: str | None, tail: str = "") -> str:
    """The note that ``k`` rows without a label were left out (``--missing-target drop``)."""
    return f"left out {k:,} row{'s' if k != 1 else ''} whose target {target!r} is missing{tail}."


def _token_message(values: Any, column: str, token: str, count: int) -> str:
    """Why a column of numbers is read as text, and the ``--na-values`` that would mend it.

    The option is offered only with a value that matches the cells as they
    are written and that this message shows as it is: never for a cell with
    a control or other invisible character (the one-line message would show
    it as ``?`` or a space, and no one can type it), nor for cells that end
    in spaces or hold a comma (the option's values are split at commas and
    stripped of spaces).
    """
    import pandas as pd

    present = values.dropna()
    text = present.astype(str)
    hits = text[text.str.strip() == token]
    cells = f"{count:,} cell{'s' if count != 1 else ''} {token!r}"
    head = f"the column {column!r} holds numbers and {cells}, so it is read as text"
    for label, raw in hits.items():
        hidden = hidden_character(raw)
        if hidden is not None:
            # the file's row number (kept through the dropped rows), or the position
            row = int(label) if pd.api.types.is_integer(label) else values.index.get_loc(label)
            damaged = (
                " (a control character in a text table is often a sign of a damaged file)"
                if "control character" in hidden
                else ""
            )
            return (
                f"{head}; the cell in data row {row + 1:,} holds {hidden}, which --na-values "
                f"cannot name: fix or remove that cell{damaged}."
            )
    if "," in token:
        return (
            f"{head}; if {token!r} marks a missing value, write another marker in its place: "
            "--na-values splits its value at commas."
        )
    spaced = sorted({raw for raw in hits if raw != token})
    if spaced:
        return (
            f"{head}; if {token!r} marks a missing value, remove the spaces around it in the "
            f"cells ({spaced[0]!r}), then give --na-values {_quoted(token)}: the option's values "
            "are stripped of spaces, and a marker matches a cell as written."
        )
    if " ".join(token.split()) != token:  # a run of spaces would show as one
        return f"{head}; if {token!r} marks a missing value, write another marker in its place."
    return f"{head}; if {token!r} marks a missing value, give --na-values {_quoted(token)}."


def _quoted(text: str) -> str:
    import shlex

    return shlex.quote(text)
