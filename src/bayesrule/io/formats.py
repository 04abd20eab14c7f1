"""File formats of tables: the one suffix table every reader and writer uses.

A table's format is told by its last suffix, looked through one compression
suffix (``penguins.csv.gz``): CSV (``.csv``, ``.txt``; ``.tsv`` and
``.tab`` separated by tabs), Parquet (``.parquet``, ``.pq``), JSON lines
(``.jsonl``, ``.ndjson``) and Excel (``.xlsx``, ``.xlsm``). Text formats may
be compressed (``.gz``, ``.bz2``, ``.xz``, ``.zst``/``.zstd``, ``.zip``);
Parquet and Excel compress their own contents and may not. Whatever can be
read can be written, by the same table (:func:`write_frames`).

The rest are the rules a table's text is read by, shared by the command line
(pandas) and the streaming readers (pyarrow): the separator sniffed from the
first lines, decimal commas, the markers of a missing value
(:data:`NA_VALUES`, deliberately narrow: ``None``, ``?`` and ``-`` are values
unless asked for), header names stripped of spaces and refused when two are
equal, the columns pandas writes for a DataFrame's index, and a numeric column
spoilt by one repeated token (``?``), which is worth a warning.

This module gathers the public names of four: :mod:`~bayesrule.io.suffixes`
(the suffix table), :mod:`~bayesrule.io.table_text` (the rules of a table's
text), :mod:`~bayesrule.io.table_files` (compressed input, writing) and
:mod:`~bayesrule.io.text_faults` (the line and byte of a text that cannot be
read: not UTF-8, a row with the wrong number of fields). They
import nothing of bayesrule but the atomic writer
(:mod:`bayesrule._util.atomic`); pandas and pyarrow are imported where they
are needed.
"""

from __future__ import annotations

from .suffixes import (
    COMPRESSION_MAGIC,
    COMPRESSIONS,
    CSV,
    EXCEL,
    FORMATS,
    JSON_LINES,
    PARQUET,
    STREAMED_COMPRESSIONS,
    TSV,
    Format,
    TablePath,
    compressed_whole,
    compression_of,
    output_format,
    sniff_compression,
    strip_compression,
    suffix_help,
    table_path,
)
from .table_files import open_input, read_head, read_head_bytes, replacing, write_frames
from .table_text import (
    NA_VALUES,
    DuplicateColumnError,
    clean_names,
    decimal_commas,
    decimal_for,
    header_names,
    index_columns,
    lone_token,
    na_markers,
    near_name,
    sniff_separator,
)
from .text_faults import (
    BadByte,
    FieldCount,
    first_bad_utf8,
    hidden_character,
    last_cells_missing,
    wide_encoding,
    wrong_field_count,
)

__all__ = [
    "BadByte",
    "FieldCount",
    "first_bad_utf8",
    "hidden_character",
    "last_cells_missing",
    "wide_encoding",
    "wrong_field_count",
    "COMPRESSIONS",
    "COMPRESSION_MAGIC",
    "CSV",
    "EXCEL",
    "FORMATS",
    "JSON_LINES",
    "NA_VALUES",
    "PARQUET",
    "STREAMED_COMPRESSIONS",
    "TSV",
    "DuplicateColumnError",
    "Format",
    "TablePath",
    "clean_names",
    "compressed_whole",
    "compression_of",
    "decimal_commas",
    "decimal_for",
    "header_names",
    "index_columns",
    "lone_token",
    "na_markers",
    "near_name",
    "open_input",
    "output_format",
    "read_head",
    "read_head_bytes",
    "replacing",
    "sniff_compression",
    "sniff_separator",
    "strip_compression",
    "suffix_help",
    "table_path",
    "write_frames",
]
