"""The rules a table's text is read by, shared by the command line (pandas) and the
streaming readers (pyarrow): the separator, decimal commas, missing-value markers,
header names, index columns, a column spoilt by one repeated token."""

from __future__ import annotations

import csv
import difflib
import io
import re
from collections.abc import Iterable, Sequence
from typing import Any

#: spellings R, pandas, SQL and JSON write; never ``None``, ``?``, ``-`` or ``0``, which
#: are values in some tables (an airbag column's ``None``) and markers in others
NA_VALUES: tuple[str, ...] = ("", "NA", "N/A", "n/a", "NaN", "nan", "null", "NULL")

#: the name pyarrow gives a column holding a DataFrame's unnamed index level
_INDEX_LEVEL = re.compile(r"__index_level_\d+__")


# ------------------------------------------------------------------ the text of a CSV file
def sniff_separator(text: str, default: str) -> str:
    """The separator among , ; tab | that splits the first lines into equally many fields."""
    lines = [line for line in text.splitlines()[:30] if line.strip()]
    if len(lines) > 1 and len(text) >= 65536:
        lines = lines[:-1]  # the last line may be cut
    if not lines:
        return default
    best, best_fields = default, 1
    for candidate in (default, ",", ";", "\t", "|"):
        counts = {_count_outside_quotes(line, candidate) for line in lines}
        if len(counts) == 1:
            n = counts.pop()
            if n + 1 > best_fields:
                best, best_fields = candidate, n + 1
    return best


def _count_outside_quotes(line: str, sep: str) -> int:
    n, quoted = 0, False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        elif ch == sep and not quoted:
            n += 1
    return n


_DECIMAL_COMMA = re.compile(r"(?:^|;)\s*-?\d+,\d+\s*(?=;|$)", re.M)
_DECIMAL_POINT = re.compile(r"(?:^|;)\s*-?\d+\.\d+\s*(?=;|$)", re.M)


def decimal_commas(text: str) -> bool:
    """Whether a semicolon-separated text writes numbers with decimal commas (``1,5``)."""
    return bool(_DECIMAL_COMMA.search(text)) and not _DECIMAL_POINT.search(text)


def decimal_for(text: str, sep: str) -> str:
    """The decimal mark of a CSV text: a comma for ``;``-separated decimal commas, else a point."""
    return "," if sep == ";" and decimal_commas(text) else "."


def header_names(text: str, sep: str) -> list[str] | None:
    """The fields of the first line of a CSV text as written (None for an empty text)."""
    text = text.removeprefix("\ufeff")
    if not text.strip():
        return None
    row = next(csv.reader(io.StringIO(text, newline=""), delimiter=sep), None)
    return None if row is None else list(row)


class DuplicateColumnError(ValueError):
    """Two columns of a table have the same name."""


def clean_names(raw: Sequence[Any], where: str) -> list[str]:
    """Header names as text, stripped of spaces; an empty one named ``Unnamed: i`` as pandas does.

    Raises
    ------
    DuplicateColumnError
        Two names are equal (after stripping), naming the name and both columns.
    """
    names: list[str] = []
    seen: dict[str, int] = {}
    for i, value in enumerate(raw):
        name = str(value).strip()
        if not name:
            name = f"Unnamed: {i}"
        if name in seen:
            raise DuplicateColumnError(
                f"{where}: the column name {name!r} is used twice (columns {seen[name] + 1} and "
                f"{i + 1}); rename one of them."
            )
        seen[name] = i
        names.append(name)
    return names


def index_columns(names: Sequence[str], pandas_metadata: dict[str, Any] | None = None) -> list[str]:
    """The columns of a table that hold a written-out DataFrame index, by their names.

    pyarrow names an unnamed index level ``__index_level_N__``; a Parquet
    file's pandas metadata lists its index columns; pandas writes an unnamed
    index to CSV as a first column with an empty name (``Unnamed: 0`` when
    read), as R writes its row names.
    """
    found = [n for n in names if _INDEX_LEVEL.fullmatch(n)]
    if pandas_metadata:
        for entry in pandas_metadata.get("index_columns", []):
            if isinstance(entry, str) and entry in names and entry not in found:
                found.append(entry)
    if names and names[0] in ("", "Unnamed: 0") and names[0] not in found:
        found.insert(0, names[0])
    return found


def na_markers(na_values: str | Iterable[str] | None, parameter: str = "na_values") -> list[str]:
    """:data:`NA_VALUES` and the markers asked for (a string or strings), in that order."""
    if na_values is None:
        extra: list[str] = []
    elif isinstance(na_values, str):
        extra = [na_values]
    else:
        try:
            extra = list(na_values)
        except TypeError:
            raise TypeError(
                f"{parameter} must be a string or a list of strings; got "
                f"{type(na_values).__name__}."
            ) from None
        bad = [v for v in extra if not isinstance(v, str)]
        if bad:
            raise TypeError(f"{parameter} must hold strings (the text of a cell); got {bad[0]!r}.")
    return list(dict.fromkeys([*NA_VALUES, *extra]))


def lone_token(values: Any) -> tuple[str, int] | None:
    """``(token, count)`` when a text column holds numbers and one repeated other text.

    Such a column (``?`` among numbers, as UCI tables mark a missing value)
    is read as text, which a table model then treats as a category; the
    caller says so. ``values`` is a pandas Series; missing values are ignored.
    """
    import pandas as pd

    if values.dtype.kind in "biufcmM":
        return None
    present = values.dropna()
    if present.empty:
        return None
    text = present.astype(str).str.strip()
    numbers = pd.to_numeric(text, errors="coerce")
    others = text[numbers.isna()]
    if others.empty or len(others) == len(text):
        return None
    tokens = others.unique()
    if len(tokens) != 1:
        return None
    return str(tokens[0]), int(len(others))


def near_name(name: str, names: Sequence[str]) -> str | None:
    """The column name ``name`` was probably meant to be (case, spaces, a typo), or None."""
    folded = {n.strip().casefold(): n for n in names}
    exact = folded.get(name.strip().casefold())
    if exact is not None and exact != name:
        return exact
    close = difflib.get_close_matches(name, list(names), n=1, cutoff=0.75)
    return close[0] if close else None


# ------------------------------------------------------------------ column types no model takes
def decimals_as_floats(table: Any, where: str) -> Any:
    """``table`` (an Arrow table or record batch) with its decimal columns as float64.

    A Parquet decimal is a number: each value becomes the float nearest to it
    (through its text, which Arrow parses correctly rounded; Arrow's own
    decimal-to-float cast is off in the last bit for about one value in 30).
    A value beyond a float's range is refused, naming the column.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.types as pt

    wanted = [i for i, t in enumerate(table.schema.types) if pt.is_decimal(t)]
    if not wanted:
        return table
    for i in wanted:
        name = table.schema.names[i]
        col = table.column(i)
        try:
            floats = pc.cast(pc.cast(col, pa.string()), pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            floats = None
        if floats is None or pc.any(pc.is_inf(floats)).as_py():
            raise ValueError(
                f"{where}: the decimal column {name!r} ({col.type}) holds values beyond a "
                "float's range (about 1.8e308), which no model can take; rescale them or "
                "leave the column out."
            )
        table = table.set_column(i, pa.field(name, pa.float64()), floats)
    return table


def unsupported_type(arrow_type: Any) -> str | None:
    """What an Arrow column type holds when no model takes it (``'dates (date32[day])'``), else None.

    Numbers, booleans, text and dictionaries (categories) are taken (decimals
    are read as numbers); dates, times, durations, binary data, lists, structs
    and maps are not.
    """
    import pyarrow.types as pt

    t = arrow_type
    if pt.is_dictionary(t):
        return unsupported_type(t.value_type)
    if (
        pt.is_integer(t)
        or pt.is_floating(t)
        or pt.is_boolean(t)
        or pt.is_null(t)
        or pt.is_decimal(t)
        or pt.is_string(t)
        or pt.is_large_string(t)
        or getattr(pt, "is_string_view", lambda _: False)(t)
    ):
        return None
    if pt.is_timestamp(t):
        what = "timestamps"
    elif pt.is_date(t):
        what = "dates"
    elif pt.is_time(t):
        what = "times of day"
    elif pt.is_duration(t) or pt.is_interval(t):
        what = "durations"
    elif pt.is_struct(t):
        what = "structs"
    elif pt.is_map(t):
        what = "maps"
    elif pt.is_list(t) or pt.is_large_list(t) or pt.is_fixed_size_list(t):
        what = "lists"
    elif pt.is_binary(t) or pt.is_large_binary(t) or pt.is_fixed_size_binary(t):
        what = "binary data"
    else:
        what = "values"
    return f"{what} ({t})"


def unsupported_values(values: Any) -> str | None:
    """:func:`unsupported_type` of a pandas column (dates, lists, dicts...), else None.

    A column of Python objects is judged by the type Arrow gives its first
    present values.
    """
    import pandas as pd

    dtype = values.dtype
    if pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
        return None
    if isinstance(dtype, (pd.CategoricalDtype, pd.StringDtype)) or str(dtype) == "str":
        return None
    import pyarrow as pa

    present = values.dropna().iloc[:64]
    if present.empty or (
        dtype.kind == "O" and all(isinstance(v, (str, bool, int, float)) for v in present)
    ):
        return None
    try:
        arrow_type = pa.Array.from_pandas(present).type
    except (pa.ArrowException, TypeError, ValueError):
        return None  # mixed values: the model's own check names them
    return unsupported_type(arrow_type)


def unsupported_message(
    where: str, column: str, what: str, leave: str | None = "--drop, or --features without it"
) -> str:
    """The refusal of a column of dates, lists, structs... and what to do instead.

    ``leave`` says how to leave a column out (the command line's options by
    default; None where it cannot be, as a fitted model's column).
    """
    how = "convert them to numbers"
    if what.startswith(("dates", "timestamps")):
        how = "convert them to numbers yourself (e.g. days since a fixed date)"
    elif what.startswith(("times", "durations")):
        how = "convert them to numbers yourself (e.g. seconds)"
    elif what.startswith(("lists", "structs", "maps")):
        how = "put each of their values in a column of its own"
    tail = f", or leave the column out ({leave})" if leave else ""
    return f"{where}: the column {column!r} holds {what}, which no model takes; {how}{tail}."
