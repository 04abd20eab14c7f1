"""The command's one error boundary: every failure is one line on stderr, exit code 2.

Every subcommand runs inside :meth:`BoundaryGroup.invoke`. Whatever it raises
— a :class:`~bayesrule.cli._data.UsageError`, a ``ValueError`` or
``LinAlgError`` from the library, a ``ModelFileError``, an ``OSError``, a
parser error from pandas or pyarrow, a ``MemoryError`` — is printed as

    bayesrule: error: <message>

with the message cleaned up for a reader who does not know Python (first
line only, no ``np.float64(...)`` reprs, no module paths), and the command
exits with status 2; ``KeyboardInterrupt`` exits with 130, and SIGTERM and
SIGHUP stop the command as Ctrl-C does (its temporary files removed) with
128 + the signal (143, 129). Usage errors
found by the argument parser keep typer's usage output and its status 2.
A closed pipe (``bayesrule evaluate m d | head -1``) is no error: the reader
has what it wanted, and the command ends quietly with status 0.

``--debug`` (anywhere before a ``--``, before or after the subcommand) or
``BAYESRULE_DEBUG=1`` lets the exception through, so Python prints its
traceback.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import sys
import threading
import traceback
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from ._data import UsageError

__all__ = [
    "BoundaryGroup",
    "FlagCommand",
    "debug_requested",
    "describe",
    "is_closed_pipe",
    "models_taking_nan",
    "notes",
    "quiet_closed_pipe",
    "report",
    "state",
]

#: Per-invocation settings shared with the commands (reset by ``BoundaryGroup.main``).
state: dict[str, bool] = {"debug": False, "quiet": False, "interrupted": False}
#: Notes for the user (an index column left out, rows dropped), said when the command succeeds.
notes: list[str] = []

PREFIX = "bayesrule: error: "
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130
_MAX_CHARS = 500
_DEBUG_ENV = "BAYESRULE_DEBUG"

# The exceptions typer uses to stop on purpose (--help, --version, a usage
# error, typer.Exit): they carry their own output and exit status. typer
# vendors click since 0.16 and re-exports only some of its classes, so the
# base of parser errors is found from one that is public in every version.
_CLICK_ERROR: type[BaseException] = next(
    (c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"),
    typer.BadParameter,
)
_PASS_THROUGH: tuple[type[BaseException], ...] = (_CLICK_ERROR, typer.Exit, typer.Abort)


def debug_requested(args: Sequence[str] = ()) -> bool:
    """Whether ``--debug`` is among ``args`` (before ``--``) or ``$BAYESRULE_DEBUG`` is set."""
    env = os.environ.get(_DEBUG_ENV, "").strip().lower()
    if env not in ("", "0", "false", "no", "off"):
        return True
    head = list(args)[: list(args).index("--")] if "--" in args else list(args)
    return "--debug" in head


_GLOBAL_FLAGS = ("--debug", "-q", "--quiet")


def _strip_debug(args: Sequence[str]) -> list[str]:
    """The arguments without the global flags, which may come before or after the command."""
    args = list(args)
    end = args.index("--") if "--" in args else len(args)
    return [a for a in args[:end] if a not in _GLOBAL_FLAGS] + args[end:]


def quiet_requested(args: Sequence[str]) -> bool:
    """Whether ``-q``/``--quiet`` is among ``args`` (before ``--``), anywhere."""
    head = list(args)[: list(args).index("--")] if "--" in args else list(args)
    return "-q" in head or "--quiet" in head


# ------------------------------------------------------------------ messages
# np.float64(1.5) -> 1.5, np.str_('a') -> 'a', np.True_ -> True (NumPy 2 reprs)
_NP_SCALAR = re.compile(
    r"\bnp\.(?:float|int|uint|complex|longdouble|bytes_|str_|bool_?)\w*\(([^()]*)\)"
)
_NP_BOOL = re.compile(r"\bnp\.(True|False)_")
# <class 'numpy.ndarray'> -> ndarray; <bayesrule.x.LDA object at 0x7f..> -> LDA
_CLASS_REPR = re.compile(r"<class '(?:[\w]+\.)*(\w+)'>")
_OBJECT_REPR = re.compile(r"<(?:[\w]+\.)*(\w+) object at 0x[0-9a-fA-F]+>")
# numpy._core._exceptions._ArrayMemoryError -> _ArrayMemoryError: module paths
# of the libraries the command uses (a file name such as iris.csv is left alone)
_MODULE_PATH = re.compile(
    r"\b(?:numpy|scipy|sklearn|pandas|pyarrow|bayesrule|builtins|typer|click|rich|"
    r"matplotlib|zipfile|json|collections|typing)(?:\.\w+)*\.(\w+)"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def clean(text: str) -> str:
    """One readable line: the first non-empty line, without NumPy reprs or module paths."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    line = lines[0] if lines else ""
    line = _NP_SCALAR.sub(r"\1", line)
    line = _NP_BOOL.sub(r"\1", line)
    line = _CLASS_REPR.sub(r"\1", line)
    line = _OBJECT_REPR.sub(r"\1", line)
    line = _MODULE_PATH.sub(r"\1", line)
    line = _CONTROL.sub("?", " ".join(line.split()))
    if len(line) > _MAX_CHARS:
        line = line[: _MAX_CHARS - 1].rstrip() + "…"
    return line


def _type_name(exc: BaseException) -> str:
    return type(exc).__name__.lstrip("_")


def describe(exc: BaseException) -> str:
    """The one-line message for ``exc`` (without the ``bayesrule: error:`` prefix)."""
    if isinstance(exc, KeyboardInterrupt):
        stopped = _stopped_by["signal"]
        if stopped and stopped != signal.SIGINT:
            return f"stopped by {signal.Signals(stopped).name}."
        return "interrupted."
    if isinstance(exc, UnicodeDecodeError):
        # exc.start counts from wherever the decoder began (a cell, a block), not from the
        # start of a file: the table readers name the file, line and byte (_read_table)
        return clean(
            f"the input is not UTF-8 text ({exc.reason}); bayesrule reads UTF-8 only: convert "
            "it, e.g. with iconv -f latin1 -t UTF-8 if it is Latin-1."
        )
    if isinstance(exc, OSError) and exc.strerror:
        # "[Errno 13] Permission denied: 'x'" -> "x: Permission denied"; of a
        # rename, name the destination (the file the user asked for).
        name = exc.filename2 if exc.filename2 is not None else exc.filename
        return clean(f"{os.fsdecode(name)}: {exc.strerror}." if name is not None else exc.strerror)
    text = clean(str(exc))
    if isinstance(exc, KeyError):
        return f"missing key {text}." if text else "missing key."
    if isinstance(exc, MemoryError):
        # a sentence of ours ends with its own period: not doubled inside the brackets
        return f"out of memory ({text.rstrip('.')})." if text else "out of memory."
    if not text:
        return f"{_type_name(exc)} raised without a message."
    if isinstance(exc, (UsageError, ValueError, TypeError, OSError)):
        return text
    return f"{_type_name(exc)}: {text}"


def report(exc: BaseException) -> None:
    """Print the one line for ``exc`` on stderr."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):  # stdout closed or a broken pipe: the error still counts
        pass
    try:
        print(PREFIX + describe(exc), file=sys.stderr, flush=True)
    except OSError as err:  # stderr's reader has gone too: the exit status still says it
        if not (is_closed_pipe(err) or _stopped_by["signal"]):  # a hung-up terminal: EIO
            raise
        quiet_closed_pipe()


def is_closed_pipe(exc: BaseException) -> bool:
    """Whether ``exc`` says the reader of a pipe has gone (``bayesrule ... | head -1``)."""
    return isinstance(exc, OSError) and exc.errno in (errno.EPIPE, errno.ESHUTDOWN)


def _rich_closed_pipe(exc: BaseException) -> bool:
    """Whether ``exc`` is rich's way of ending on a closed pipe.

    rich's ``Console`` meets a ``BrokenPipeError`` by pointing stdout at the
    null device and raising ``SystemExit(1)``; nothing else in the command
    exits with 1, so that pair is recognised and turned into a quiet end.
    """
    if not isinstance(exc, SystemExit) or exc.code != 1:
        return False
    try:
        return os.path.samestat(os.fstat(sys.stdout.fileno()), os.stat(os.devnull))
    except (OSError, ValueError, AttributeError):
        return False


def quiet_closed_pipe() -> None:
    """Point stdout and stderr at the null device after a pipe's reader has gone.

    What was written has been read; what remains (buffered text, the
    interpreter's last flush) goes nowhere instead of raising again, so the
    command ends quietly with status 0, as ``cat`` or ``grep`` do when
    ``head`` stops reading. Only the streams whose pipe is closed are moved.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                with contextlib.suppress(OSError, ValueError, AttributeError):
                    os.dup2(devnull, stream.fileno())
    finally:
        os.close(devnull)


def _show_warnings(caught: list[warnings.WarningMessage]) -> None:
    seen: set[str] = set()
    for w in caught:
        line = clean(str(w.message))
        if line and line not in seen:
            seen.add(line)
            print(f"bayesrule: warning: {line}", file=sys.stderr)


# ------------------------------------------------------------------ hints
def models_taking_nan(exclude: type | None = None) -> list[str]:
    """Short names of the models that treat NaN as missing, never ``exclude`` (the one used).

    A hint names other models to try; it must never suggest the model that
    has just failed, so the model in use is always left out of the list.
    """
    from ..estimators.registry import available

    return [
        short
        for short, cls in available().items()
        if cls is not exclude and cls().input_spec().allow_nan
    ]


# ------------------------------------------------------------------ flags
#: words a user may write after a flag, meaning it as the flag's value
_BOOL_WORDS = frozenset(("true", "false", "yes", "no", "on", "off", "1", "0", "y", "n"))


def _is_flag(param: Any) -> bool:
    return bool(getattr(param, "is_flag", False))


class FlagCommand(TyperCommand):
    """A subcommand whose flags show as flags in ``--help`` and refuse a value after them.

    typer prints ``<bool>`` after every flag, which reads as if ``--proba
    true`` were meant; it is not (``true`` would be taken as the next
    argument, a data file). The help shows nothing after a flag, and a word
    such as ``true`` or ``no`` right after a flag, that is not a file, is
    refused with the flag named.
    """

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)
        for param in params:
            if _is_flag(param) and param.metavar is None:
                param.metavar = ""  # typer's help shows the metavar in place of <bool>
        return params

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        flags = {
            name: param
            for param in self.get_params(ctx)
            if _is_flag(param)
            for name in (*param.opts, *param.secondary_opts)
        }
        end = args.index("--") if "--" in args else len(args)
        for given, after in zip(args[:end], args[1:end], strict=False):
            if given in flags and after.lower() in _BOOL_WORDS and not os.path.exists(after):
                raise typer.BadParameter(
                    f"{given} is a flag and takes no value: give {given} alone "
                    f"({after!r} would be read as the next argument).",
                    ctx=ctx,
                    param=flags[given],
                )
        return super().parse_args(ctx, args)


# ------------------------------------------------------------------ the group
#: The signal that stopped the command (0: none); the exit status is 128 + it
_stopped_by: dict[str, int] = {"signal": 0}
#: The signals that stop a command as Ctrl-C does: ``timeout``, ``kill``, schedulers and
#: ``docker stop`` send SIGTERM, a closed terminal SIGHUP
_STOPPING = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


def _on_signal(signum: int, frame: Any) -> None:
    state["interrupted"] = True
    _stopped_by["signal"] = _stopped_by["signal"] or signum
    raise KeyboardInterrupt


def _exit_status() -> int:
    """128 + the signal that stopped the command (130 for Ctrl-C)."""
    return 128 + _stopped_by["signal"] if _stopped_by["signal"] else EXIT_INTERRUPTED


@contextlib.contextmanager
def _noting_interrupts() -> Iterator[None]:
    """Stop on Ctrl-C, SIGTERM and SIGHUP alike, and remember it when a library swallows it.

    Each raises ``KeyboardInterrupt`` in the main thread, so that the
    writers' ``finally`` blocks remove their temporary files, and the command
    exits with 128 + the signal (130, 143, 129). pandas' C parser, for one,
    turns an interrupted ``read`` into a ``ParserError``; the flag lets the
    boundary still exit with the signal's status. A signal whose handler is
    not the default (a caller ignoring SIGHUP, as ``nohup`` does) is left
    alone.
    """
    state["interrupted"] = False
    _stopped_by["signal"] = 0
    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in _STOPPING:
            default = signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL
            if signal.getsignal(signum) is default:
                previous[signum] = default
                signal.signal(signum, _on_signal)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


class BoundaryGroup(TyperGroup):
    """The ``bayesrule`` group: reads ``--debug`` anywhere, and turns errors into one line."""

    def main(self, args: Sequence[str] | None = None, *rest: Any, **kwargs: Any) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        state["debug"] = debug_requested(argv)
        state["quiet"] = quiet_requested(argv)
        notes.clear()
        return super().main(_strip_debug(argv), *rest, **kwargs)

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)
        for param in params:  # the group's own flags, as FlagCommand shows them
            if _is_flag(param) and param.metavar is None:
                param.metavar = ""
        return params

    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        try:  # --help is printed while the arguments are parsed
            return super().make_context(*args, **kwargs)
        except (OSError, SystemExit) as exc:
            if not (is_closed_pipe(exc) or _rich_closed_pipe(exc)):
                raise
            quiet_closed_pipe()
            raise typer.Exit(0) from None

    def invoke(self, ctx: Any) -> Any:
        with _noting_interrupts():
            try:
                result = self._invoke_quietly(ctx)
                if state["interrupted"]:
                    # a stop signal whose KeyboardInterrupt something swallowed: the
                    # command still stops with the signal's status, never with 0
                    raise KeyboardInterrupt
                return result
            except _PASS_THROUGH:
                raise
            except SystemExit as exc:
                if _rich_closed_pipe(exc):
                    raise typer.Exit(0) from None
                raise
            except (Exception, KeyboardInterrupt) as exc:
                if is_closed_pipe(exc):  # `bayesrule ... | head -1`: the reader has what it wanted
                    quiet_closed_pipe()
                    raise typer.Exit(0) from None
                interrupted = isinstance(exc, KeyboardInterrupt) or state["interrupted"]
                if state["debug"]:
                    if not interrupted:
                        raise
                    traceback.print_exc()
                else:
                    report(KeyboardInterrupt() if interrupted else exc)
                raise typer.Exit(_exit_status() if interrupted else EXIT_ERROR) from None

    def _invoke_quietly(self, ctx: Any) -> Any:
        if state["debug"]:  # warnings as Python shows them, with their source line
            result = super().invoke(ctx)
            for line in dict.fromkeys(notes):
                print(f"note: {line}", file=sys.stderr)
            return result
        # Warnings wait until the command succeeds, as one line each; a failing
        # command prints its error line alone.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            result = super().invoke(ctx)
        if not state["quiet"]:
            for line in dict.fromkeys(notes):
                print(f"note: {line}", file=sys.stderr)
        _show_warnings(caught)
        return result
