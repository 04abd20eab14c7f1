"""Where a table's text goes wrong: the line and byte a reader's error leaves out.

pandas and pyarrow say *that* a CSV file is not UTF-8 or that a row has the
wrong number of fields, but not where in the file: pandas' byte offset of a
decoding error counts from the start of a cell, and its line of a ragged
row counts records, not lines. The functions here read the (decompressed)
bytes again, a block at a time, to find the first fault as a text editor
shows it: a 1-based line and a 0-based byte offset. They run only after a
reader has failed, or, for a row with too few fields, only when a row may be
one (its last cell is missing), so a well-formed file is read once.

They import nothing of bayesrule; the callers open the file
(:func:`bayesrule.io.formats.open_input`).
"""

from __future__ import annotations

import codecs
import csv
import io
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np
from numpy.typing import NDArray

#: bytes read at a time when a file is searched
_BLOCK = 1 << 20

#: byte-order marks, longest first (UTF-32's little-endian mark starts as UTF-16's)
_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


# ------------------------------------------------------------------ encodings
def wide_encoding(head: bytes) -> tuple[str, str] | None:
    """``(encoding, why)`` when the first bytes of a file look like UTF-16 or UTF-32 text, else None.

    A byte-order mark says so (``"UTF-16"``, ``"UTF-32"``); without one, text
    in UTF-16 has a NUL byte at every other position (the high byte of each
    ASCII character), which no CSV file written in UTF-8 has: ``"UTF-16LE"``
    when the NUL bytes come second, ``"UTF-16BE"`` when they come first (the
    names ``iconv -f`` takes). ``why`` says which it was, for a message.
    """
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name, f"it starts with the {name} byte-order mark"
    sample = head[:512]
    if len(sample) < 8:
        return None
    for nul_first, name in ((False, "UTF-16LE"), (True, "UTF-16BE")):
        nuls, text = (sample[0::2], sample[1::2]) if nul_first else (sample[1::2], sample[0::2])
        if nuls.count(0) >= 0.9 * len(nuls) and text.count(0) <= 0.1 * len(text):
            return name, "every other byte is a NUL byte"
    return None


@dataclass(frozen=True)
class BadByte:
    """The first byte of a text that does not decode as UTF-8.

    Attributes
    ----------
    offset : int
        Its offset in the bytes, from 0.
    line : int
        Its line, from 1 (the line feeds before it, plus one).
    value : int
        The byte.
    reason : str
        Python's reason (``"invalid start byte"``, ``"invalid continuation byte"``,
        ``"unexpected end of data"``).
    """

    offset: int
    line: int
    value: int
    reason: str


def first_bad_utf8(stream: BinaryIO, block: int = _BLOCK) -> BadByte | None:
    """The first byte of ``stream`` that is not UTF-8, or None when all of it decodes.

    ``stream`` is read to that byte (to its end when there is none), one
    block at a time: memory holds one block whatever the size of the file.
    A character cut by the end of a block is completed by the next one.
    """
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    done = 0  # bytes handed to the decoder before this block
    lines = 1
    while True:
        data = bytes(stream.read(block))
        final = not data
        held = len(decoder.getstate()[0])  # the start of a character cut by the last block
        try:
            decoder.decode(data, final)
        except UnicodeDecodeError as exc:
            # exc.object is the held bytes and this block; the held bytes hold no line feed
            where = exc.start - held
            bad = exc.object[exc.start]
            before = data[: max(where, 0)].count(b"\n")
            return BadByte(done + where, lines + before, bad, exc.reason)
        if final:
            return None
        done += len(data)
        lines += data.count(b"\n")


# ------------------------------------------------------------------ rows and fields
@dataclass(frozen=True)
class FieldCount:
    """A data row whose number of fields is not the header's.

    Attributes
    ----------
    line : int
        The line it starts on, from 1, as a text editor numbers them.
    row : int
        Its number among the data rows, from 0 (blank lines and the header not counted).
    fields : int
        How many fields it has.
    """

    line: int
    row: int
    fields: int


def last_cells_missing(
    stream: BinaryIO,
    sep: str,
    fields: int,
    null_values: Sequence[str],
    rows: int | None = None,
) -> NDArray[np.bool_] | None:
    """Whether each data row's last field is missing, as pyarrow's CSV reader splits the text.

    None when a row (the header included) has another number of fields than
    ``fields``, or the text cannot be read so: the caller then looks closer
    (:func:`wrong_field_count`). A field is missing when it is empty or one
    of ``null_values``. pyarrow reads in parallel and far faster than the
    ``csv`` module, but does not skip the spaces after a separator or lines
    of spaces as pandas does: where that matters, the answer differs from
    pandas' rather than being wrong, and the caller compares the two.

    Parameters
    ----------
    stream : binary file
        The decompressed bytes, from the header line on.
    sep : str
        The field separator.
    fields : int
        The fields of every row.
    null_values : sequence of str
        The texts of a missing value.
    rows : int, optional
        Read only this many data rows (a block or so more), not the whole text.
    """
    try:
        import pyarrow as pa
        import pyarrow.csv as pcsv
    except ImportError:
        return None

    def refuse(row: Any) -> str:
        return "error"  # a row of another length: stop at once

    names = [f"f{i}" for i in range(fields)]
    try:
        reader = pcsv.open_csv(
            stream,
            read_options=pcsv.ReadOptions(column_names=names, block_size=_BLOCK),
            parse_options=pcsv.ParseOptions(
                delimiter=sep, newlines_in_values=True, invalid_row_handler=refuse
            ),
            convert_options=pcsv.ConvertOptions(
                include_columns=names[-1:],
                column_types={names[-1]: pa.string()},
                null_values=list(null_values),
                strings_can_be_null=True,
            ),
        )
        parts: list[NDArray[np.bool_]] = []
        seen = 0
        for batch in reader:
            parts.append(batch.column(0).is_null().to_numpy(zero_copy_only=False))
            seen += batch.num_rows
            if rows is not None and seen > rows:
                break
    except (pa.ArrowInvalid, OSError, ValueError):
        return None
    if not parts:
        return None
    missing = np.concatenate(parts)[1:]  # the header is the first row
    return missing[:rows] if rows is not None else missing


class _Lines:
    """The lines of a text, counted, keeping the text of the record being read."""

    def __init__(self, text: io.TextIOBase) -> None:
        self._text = text
        self.count = 0  # lines handed out
        self.record: list[str] = []

    def __iter__(self) -> Iterator[str]:
        for line in self._text:
            self.count += 1
            self.record.append(line)
            yield line


def wrong_field_count(
    stream: BinaryIO,
    sep: str,
    expected: int,
    *,
    fewer: bool = False,
    rows: Sequence[bool] | None = None,
    last: int | None = None,
) -> FieldCount | None:
    """The first data row of a CSV text whose number of fields is not ``expected``.

    The text is split as pandas' reader splits it (``"`` quotes, a doubled
    ``""`` inside them, spaces after a separator skipped); the first line
    that is not blank is the header; blank lines, or lines of spaces only,
    are skipped and not counted as rows. A row that is one empty field
    written in quotes (``""``) is a row with one field.

    Parameters
    ----------
    stream : binary file
        The decompressed bytes, UTF-8; read to the row found or to ``last``.
    sep : str
        The field separator.
    expected : int
        The fields of every row.
    fewer : bool
        Only a row with fewer fields counts (one with more is let through).
    rows : sequence of bool, optional
        Only the data rows ``i`` (from 0) where ``rows[i]`` is true may count:
        those a reader's result points at (a padded row's last cell is
        missing). A NumPy array of booleans does.
    last : int, optional
        The last data row (from 0) to look at; the search stops after it.
    """
    text = io.TextIOWrapper(stream, encoding="utf-8", errors="replace", newline="")
    lines = _Lines(text)
    reader = csv.reader(lines, delimiter=sep, quotechar='"', skipinitialspace=True, strict=False)
    row = -1  # the header
    start = 1
    try:
        for fields in reader:
            raw, lines.record = lines.record, []
            line, start = start, lines.count + 1
            if not "".join(raw).strip():
                continue  # a blank line, which pandas skips
            if row >= 0 and len(fields) != expected and (not fewer or len(fields) < expected):
                if rows is None or (row < len(rows) and rows[row]):
                    return FieldCount(line, row, len(fields))
            row += 1
            if last is not None and row > last:
                break
    except csv.Error:  # a field larger than the csv module takes: no answer, not an error
        return None
    finally:
        text.detach()
    return None


# ------------------------------------------------------------------ characters
def hidden_character(text: str) -> str | None:
    """The first character of ``text`` that a message cannot show as it is, named; else None.

    Control characters (a NUL byte, an escape), format characters (a
    zero-width space, a byte-order mark), line and paragraph separators, and
    every blank other than the plain space: a terminal shows them as nothing
    or as a space, and a message cleaned to one line replaces them. The name
    reads ``the control character NUL (U+0000)``, ``the character NO-BREAK
    SPACE (U+00A0)``.
    """
    for ch in text:
        if ch == " " or (unicodedata.category(ch) not in _HIDDEN and not ch.isspace()):
            continue
        code = f"U+{ord(ch):04X}"
        if unicodedata.category(ch) == "Cc":
            return f"the control character {_CONTROL_NAMES.get(ch, code)} ({code})"
        return f"the character {unicodedata.name(ch, code)} ({code})"
    return None


#: control, format, space, line and paragraph separator characters
_HIDDEN = frozenset(("Cc", "Cf", "Zs", "Zl", "Zp"))


# the C0 control characters have no name in the Unicode database: their usual abbreviations
_CONTROL_NAMES = {
    chr(i): name
    for i, name in enumerate(
        "NUL SOH STX ETX EOT ENQ ACK BEL BS TAB LF VT FF CR SO SI DLE DC1 DC2 DC3 DC4 NAK SYN "
        "ETB CAN EM SUB ESC FS GS RS US".split()
    )
} | {"\x7f": "DEL"}
