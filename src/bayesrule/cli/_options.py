"""The arguments and options the commands share, and their checks."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from ._data import (
    UsageError,
    use_read_options,
)

# ------------------------------------------------------------------ commands
DataArg = Annotated[
    list[Path],
    typer.Argument(
        help="A table (CSV/TSV, also .gz/.bz2/.xz/.zip; Parquet; '-' for standard input), "
        ".npy, .npz, or a directory (or images file) of IDX data; or a table in several "
        "files: a directory of Parquet files (read recursively), a quoted glob "
        "('data/part-*.parquet'), or several CSV or Parquet files, read in that order.",
        show_default=False,
    ),
]
ModelArg = Annotated[Path, typer.Argument(help="A model file written by `bayesrule fit`.")]
SplitOpt = Annotated[str, typer.Option(help="For an IDX directory: 'train' or 'test' files.")]


ColumnsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--features",
        "-f",
        help="Feature columns: names or globs, comma-separated or repeated (default: all).",
    ),
]
DropOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--drop", help="Columns to leave out: names or globs, comma-separated or repeated."
    ),
]
SepOpt = Annotated[
    str | None,
    typer.Option("--sep", help="CSV field separator (default: sniffed; ',' ';' tab '|')."),
]
NaOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--na-values",
        help="Cell texts that mark a missing value besides empty, NA, N/A, n/a, NaN, nan, null, "
        "NULL (e.g. '?'): comma-separated or repeated.",
    ),
]
SheetOpt = Annotated[
    str | None, typer.Option("--sheet", help="The sheet of an Excel file (default: the first).")
]
StreamOpt = Annotated[
    bool | None,
    typer.Option(
        "--stream/--no-stream",
        help="Read CSV/Parquet files block by block, in bounded memory (default: for data "
        "over 1 GiB, or with --block-rows).",
        show_default=False,
    ),
]
BlockRowsOpt = Annotated[
    int | None,
    typer.Option(
        "--block-rows", min=1, help="Rows per streamed block (implies --stream; default: ~32 MiB)."
    ),
]
SchedulerOpt = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        help="Run on a Dask cluster: its scheduler's address (tcp://host:8786), or 'local' "
        "for a cluster of processes on this machine.",
    ),
]
SparkOpt = Annotated[
    str | None,
    typer.Option(
        "--spark",
        metavar="MASTER",
        help="Run on Apache Spark: a master (local[2], spark://host:7077, sc://host:15002, yarn) "
        "or 'session' (the running session, else the environment's Spark settings). Spark "
        "reads DATA: Parquet, CSV, JSON lines or ORC files or folders, local or URIs.",
    ),
]
IncompleteOpt = Annotated[
    str,
    typer.Option(
        "--incomplete",
        help="Rows with cells the model cannot take (NaN for LDA/QDA/RDA/MDA, infinity for "
        "any): 'empty' (empty prediction cells, or left out of evaluate, with a note) or "
        "'error'.",
    ),
]
MissingOpt = Annotated[
    str,
    typer.Option(
        "--missing-target",
        help="Rows whose label is missing: 'drop' (with a note) or 'error'.",
    ),
]


@dataclasses.dataclass
class Reading:
    """The options of a command that reads DATA: each declared once, in the order ``--help``
    lists them (after the command's own). :func:`reads_data` gives a command those it takes."""

    sep: SepOpt = None
    na_values: NaOpt = None
    sheet: SheetOpt = None
    missing_target: MissingOpt = "drop"
    split: SplitOpt = "test"
    stream: StreamOpt = None
    block_rows: BlockRowsOpt = None
    scheduler: SchedulerOpt = None
    spark: SparkOpt = None
    incomplete: IncompleteOpt = "empty"


def reads_data(
    *, without: tuple[str, ...] = (), **defaults: Any
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A command that takes the :class:`Reading` options (but ``without``) after its own.

    The command declares a last parameter ``reading: Reading`` and receives
    them there; ``defaults`` changes an option's default (``split="train"``).
    ``--na-values`` and ``--sheet`` are set for the command's reads
    (:func:`~bayesrule.cli._data.use_read_options`) before it runs.
    """
    hints = typing.get_type_hints(Reading, include_extras=True)
    taken = [f for f in dataclasses.fields(Reading) if f.name not in without]
    options = [
        inspect.Parameter(
            f.name,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            annotation=hints[f.name],
            default=defaults.get(f.name, f.default),
        )
        for f in taken
    ]

    def wrap(command: Callable[..., None]) -> Callable[..., None]:
        own = inspect.signature(command, eval_str=True)

        @functools.wraps(command)
        def run(**kwargs: Any) -> None:
            reading = Reading(**{f.name: kwargs.pop(f.name) for f in taken})
            use_read_options(reading.na_values, reading.sheet)
            command(**kwargs, reading=reading)

        params = [p for p in own.parameters.values() if p.name != "reading"]
        run.__signature__ = own.replace(parameters=[*params, *options])  # type: ignore[attr-defined]
        return run

    return wrap


def check_choice(option: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise UsageError(f"{option} {value}: expected one of {', '.join(choices)}.")
    return value


def parse_sep(sep: str | None) -> str | None:
    if sep is None:
        return None
    named = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|", "space": " "}
    sep = named.get(sep.lower(), sep)
    if len(sep) != 1:
        raise UsageError(f"--sep {sep!r}: expected one character (or tab, comma, semicolon).")
    return sep


TargetOpt = Annotated[
    str | None,
    typer.Option("--target", "-t", help="Label column (default: the one the model was fitted on)."),
]
