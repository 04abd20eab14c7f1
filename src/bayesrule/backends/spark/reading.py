"""Tables and sessions for the front ends of the Spark backend (the command line's ``--spark``).

Three things a program that starts from a file name and a master URL needs
before :func:`bayesrule.spark.fit` can run:

* :func:`table_format` tells how Spark should read a path, by its suffixes
  (``.parquet``, ``.csv`` / ``.tsv`` and their compressed forms, ``.json`` /
  ``.jsonl``, ``.orc``), a local directory by the files in it;
  :func:`read_table` reads one or several such paths as one DataFrame;
* :func:`check_master` refuses, within seconds, a standalone master or a
  Spark Connect server that does not answer (Spark itself would retry its
  registration for a minute);
* :func:`spark_session` is the session of a command: the active one when the
  process already has one, else a new one on the master given, whose JVM
  writes its log to a file instead of the terminal, stopped when the
  command ends.

Nothing here imports pyspark at module level.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .env import check_java, require_pyspark, session

__all__ = [
    "CONNECT_TIMEOUT",
    "FORMATS",
    "SparkStart",
    "TableFormat",
    "check_master",
    "data_files",
    "is_local_master",
    "location",
    "master_kind",
    "read_table",
    "spark_session",
    "table_format",
]

#: seconds to wait for a standalone master or a Spark Connect server to answer
CONNECT_TIMEOUT = 5.0

#: the formats Spark reads, by suffix
FORMATS: dict[str, str] = {
    ".parquet": "parquet",
    ".parq": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".tsv": "csv",
    ".tab": "csv",
    ".txt": "csv",
    ".json": "json",
    ".jsonl": "json",
    ".ndjson": "json",
    ".orc": "orc",
}
#: compressed text Spark (Hadoop) decompresses by its suffix
_CODECS = {".gz": "gzip", ".bz2": "bzip2", ".deflate": "deflate", ".lz4": "lz4", ".zst": "zstd"}
#: compressions of a file that Spark reads as if it were plain text (garbage)
_UNREADABLE = {".xz": "xz", ".zip": "zip", ".7z": "7z"}
_TAB_SUFFIXES = (".tsv", ".tab")
# scheme:/rest, as pathlib leaves scheme://rest (hdfs://namenode/x -> hdfs:/namenode/x)
_COLLAPSED_URI = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):/(?!/)(.*)$")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")
_LOCAL_MASTER = re.compile(r"^local(\[(\*|[1-9]\d*)(,\s*[1-9]\d*)?\])?$")
_LOCAL_CLUSTER = re.compile(r"^local-cluster\[\s*\d+\s*,\s*\d+\s*,\s*\d+\s*\]$")


# ------------------------------------------------------------------ paths and formats
def location(path: str | os.PathLike[str]) -> str:
    """The path as Spark should see it: a URI that ``pathlib`` collapsed is restored.

    ``Path("s3a://bucket/key")`` reads ``s3a:/bucket/key``; Hadoop takes
    that as a path without a host, so ``scheme:/rest`` becomes
    ``scheme://rest`` again. ``file:/x`` is left as it is (Hadoop reads it).
    A URI of the default file system's host (``hdfs:///data``) cannot be
    told from one with a host once collapsed: give the host.
    """
    text = os.fspath(path)
    found = _COLLAPSED_URI.match(text)
    if found and found.group(1).lower() != "file":
        return f"{found.group(1)}://{found.group(2)}"
    return text


def _is_uri(text: str) -> bool:
    return bool(_URI.match(text)) or text.lower().startswith("file:")


def _local(text: str) -> str | None:
    """The local file system path of ``text`` (a plain path or a ``file:`` URI), else None."""
    if text.lower().startswith("file:"):
        return re.sub(r"^file:(//)?", "", text, flags=re.IGNORECASE) or "/"
    return None if _is_uri(text) else text


@dataclass(frozen=True)
class TableFormat:
    """How Spark reads a path: ``format`` (parquet, csv, json, orc), the CSV separator it
    implies (a tab for ``.tsv``/``.tab``), and the compression its name says (or None)."""

    format: str
    sep: str | None = None
    compression: str | None = None


def _by_name(name: str) -> TableFormat | None:
    """The format a file or folder name says (``x.csv.gz``, ``part-0.parquet``), or None."""
    lowered = name.lower().rstrip("/")
    compression = None
    for suffix, codec in {**_CODECS, **_UNREADABLE}.items():
        if lowered.endswith(suffix):
            compression, lowered = codec, lowered[: -len(suffix)]
            break
    # Spark's part files: part-00000-<uuid>-c000.snappy.parquet, part-00000.csv.gz
    for suffix in (".snappy", ".gzip", ".zstd", ".lz4", ".zlib"):
        if lowered.endswith(suffix) and compression is None:
            lowered = lowered[: -len(suffix)]
    for suffix, fmt in FORMATS.items():
        if lowered.endswith(suffix):
            sep = "\t" if suffix in _TAB_SUFFIXES else None
            return TableFormat(fmt, sep, compression)
    return None


def data_files(folder: str) -> Iterator[str]:
    """The files of a local folder Spark would read: names starting with ``_`` or ``.`` skipped."""
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(("_", ".")))
        for name in sorted(files):
            if not name.startswith(("_", ".")):
                yield os.path.join(root, name)


def _sniffed(path: str) -> TableFormat | None:
    """Parquet or ORC by the file's first bytes (a file without a suffix)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
    except OSError:
        return None
    if head == b"PAR1":
        return TableFormat("parquet")
    if head[:3] == b"ORC":
        return TableFormat("orc")
    return None


def table_format(path: str) -> TableFormat:
    """How Spark should read ``path`` (a local path or a URI such as ``s3a://bucket/key``).

    The name's suffixes say it (``.parquet``, ``.csv.gz``, ``.tsv``,
    ``.jsonl``, ``.orc``); a local folder without one is read as its files
    are named (Spark's ``part-*`` files), a local file without one as its
    first bytes say (Parquet, ORC); a remote path without a suffix is taken
    for a folder of Parquet files.

    Raises
    ------
    ValueError
        The path does not exist (locally), names a format Spark does not
        read, a compression it cannot read (``.xz``, ``.zip``), or a folder
        holding files of several formats or none.
    """
    text = location(path)
    local = _local(text)
    named = _by_name(os.path.basename(text.rstrip("/")))
    is_pattern = any(ch in text for ch in "*?[{")
    if local is not None and not is_pattern and not os.path.exists(local):
        raise ValueError(f"{text}: no such file or directory.")
    if named is None and local is not None and os.path.isdir(local):
        kinds = {}
        for file in data_files(local):
            found = _by_name(os.path.basename(file)) or _sniffed(file)
            if found is None:
                raise ValueError(
                    f"{text}: the folder holds {os.path.relpath(file, local)!r}, which Spark "
                    "cannot read as a table (Parquet, CSV, JSON lines or ORC files)."
                )
            kinds[found.format] = found
            if len(kinds) > 1:
                raise ValueError(
                    f"{text}: the folder holds files of several formats "
                    f"({', '.join(sorted(kinds))}); give one format's files."
                )
        if not kinds:
            raise ValueError(f"{text}: the folder holds no data file.")
        named = next(iter(kinds.values()))
    elif named is None and local is not None and not is_pattern:
        named = _sniffed(local)
        if named is None:
            raise ValueError(
                f"{text}: cannot tell its format from its name; Spark reads Parquet (.parquet), "
                "CSV (.csv, .tsv, also .gz or .bz2), JSON lines (.json, .jsonl) and ORC (.orc)."
            )
    elif named is None:
        named = TableFormat("parquet")  # a remote folder, as Spark writes them
    if named.compression in _UNREADABLE.values():
        raise ValueError(
            f"{text}: Spark cannot read {named.compression}-compressed files; recompress it "
            "with gzip or bzip2, or read it without Spark."
        )
    if named.compression is not None and named.format in ("parquet", "orc"):
        raise ValueError(
            f"{text}: a {named.format} file compressed as a whole ({named.compression}) cannot "
            f"be read; {named.format} files compress their own columns."
        )
    return named


def read_table(
    spark: Any,
    paths: Sequence[str],
    fmt: TableFormat | None = None,
    *,
    sep: str | None = None,
    null_value: str | None = None,
) -> Any:
    """The table in ``paths`` as one Spark DataFrame (lazy, but for CSV's schema inference).

    All paths must be read the same way (:func:`table_format` of the first
    unless ``fmt`` is given). Folders are read recursively, without
    partition columns (``recursiveFileLookup``), so that the columns are
    those in the files. CSV: a header line, the column types inferred from
    every row (one pass over the data), ``sep`` (default: a comma, a tab for
    ``.tsv``), empty cells and ``null_value`` as missing, and rows with more
    or fewer fields than the header refused (``FAILFAST``) rather than
    padded or cut. JSON: one object per line.
    """
    if not paths:
        raise ValueError("no data path given.")
    located = [location(p) for p in paths]
    formats = {p: table_format(p) for p in located} if fmt is None else dict.fromkeys(located, fmt)
    kinds = {f.format for f in formats.values()}
    if len(kinds) > 1:
        raise ValueError(
            f"the data paths hold several formats ({', '.join(sorted(kinds))}); give one format."
        )
    first = formats[located[0]]
    reader = spark.read.option("recursiveFileLookup", "true")
    if first.format == "csv":
        separators = {f.sep for f in formats.values()}
        if sep is None and len(separators) > 1:
            raise ValueError("the data paths mix tab- and comma-separated files; give --sep.")
        reader = (
            reader.option("header", "true")
            .option("inferSchema", "true")
            .option("sep", sep or first.sep or ",")
            .option("mode", "FAILFAST")
        )
        if null_value is not None:
            reader = reader.option("nullValue", null_value)
    elif first.format == "json":
        reader = reader.option("mode", "FAILFAST")
    return reader.format(first.format).load(located)


# ------------------------------------------------------------------ masters and sessions
def master_kind(master: str) -> str:
    """What ``master`` names: ``"session"``, ``"local"``, ``"standalone"``, ``"connect"``, ``"cluster"``.

    ``session``: the process's active session, else the settings of the
    environment (``spark-submit``, ``spark-defaults.conf``, ``SPARK_REMOTE``),
    whose default master is ``local[*]``. ``local``, ``local[N]``,
    ``local[*]``, ``local[N,F]``: threads of this process's JVM.
    ``spark://host:port`` (several hosts: a comma-separated list): a
    standalone cluster. ``sc://host:port``: a Spark Connect server.
    ``yarn`` and ``k8s://...``: a cluster manager, as ``spark-submit`` takes it.

    Raises
    ------
    ValueError
        Anything else.
    """
    text = master.strip()
    if text == "session":
        return "session"
    if _LOCAL_MASTER.match(text) or _LOCAL_CLUSTER.match(text):
        return "local"
    if re.match(r"^spark://[^/\s]+$", text):
        return "standalone"
    if re.match(r"^sc://[^/\s]+(/.*)?$", text):
        return "connect"
    if text == "yarn" or re.match(r"^k8s://\S+$", text):
        return "cluster"
    raise ValueError(
        f"{master!r}: expected 'local[N]', 'local[*]', 'spark://host:port', 'sc://host:port', "
        "'yarn', 'k8s://...', or 'session' (the active session or the environment's settings)."
    )


def is_local_master(master: str) -> bool:
    """Whether ``master`` runs the executors in this machine's JVM (``local[...]``)."""
    return master_kind(master) == "local"


def _endpoints(master: str) -> list[tuple[str, int]]:
    """``(host, port)`` of each master of ``spark://h1:p1,h2:p2`` or of ``sc://host:port``."""
    kind = master_kind(master)
    rest = master.split("://", 1)[1]
    default = 7077 if kind == "standalone" else 15002
    if kind == "connect":
        rest = rest.split("/", 1)[0].split(";", 1)[0]
    found = []
    for item in rest.split(","):
        host, _, port = item.strip().rpartition(":") if ":" in item else (item.strip(), "", "")
        host = host.strip("[]")  # an IPv6 address in brackets
        if not port.isdigit() or not host:
            if not host and not port:
                raise ValueError(f"{master!r}: no host in the master URL.")
            host, port = (host or item.strip()), str(default)
        found.append((host, int(port)))
    return found


def check_master(master: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Refuse a ``spark://`` master or ``sc://`` server that does not accept a connection.

    Spark's own client would retry its registration for a minute and then
    print a long log; this tries a TCP connection to each host given (the
    first that accepts one will do) within ``timeout`` seconds. Other
    masters are not checked.

    Raises
    ------
    ConnectionError
        One line naming the master and why no connection was made.
    """
    kind = master_kind(master)
    if kind not in ("standalone", "connect"):
        return
    reasons = []
    for host, port in _endpoints(master):
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return
        except TimeoutError:
            reasons.append(f"{host}:{port}: no answer within {timeout:g} s")
        except OSError as exc:
            reasons.append(f"{host}:{port}: {exc.strerror or exc}")
    what = "Spark master" if kind == "standalone" else "Spark Connect server"
    raise ConnectionError(f"no {what} answered at {master} ({'; '.join(reasons)}).")


@dataclass
class SparkStart:
    """The session a command runs on, and the file its JVM writes its log to (None: the
    terminal, or a session this command did not start)."""

    spark: Any
    log: str | None = None
    started: bool = False


@contextlib.contextmanager
def _output_to(path: str) -> Iterator[None]:
    """File descriptors 1 and 2 pointed at ``path`` while the block runs (a child inherits them)."""
    sys.stdout.flush()
    sys.stderr.flush()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    saved = [os.dup(1), os.dup(2)]
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for handle in (*saved, fd):
            os.close(handle)


def _has_fds() -> bool:
    try:
        os.fstat(1)
        os.fstat(2)
    except OSError:
        return False
    return True


@contextlib.contextmanager
def spark_session(
    master: str, *, quiet: bool = True, timeout: float = CONNECT_TIMEOUT
) -> Iterator[SparkStart]:
    """The session of one command on ``master``: the active one, or a new one stopped after.

    When the process already has an active session (a notebook, a test
    suite, ``spark-submit``), that one is used as ``getOrCreate`` would, and
    left running. Otherwise ``master`` is checked (:func:`master_kind`,
    :func:`check_master`), Java is checked for a session with a JVM of its
    own, and a session is started (the executors of a local master run
    this interpreter, ``PYSPARK_PYTHON``); with ``quiet``, the JVM's output
    (Spark's log: warnings and errors, a failed task's traceback) goes to a
    temporary file instead of the terminal, kept when the block fails and
    removed when it succeeds. The console progress bar is off; a local
    master also runs without the web UI.

    Raises
    ------
    ImportError
        pyspark (or pyarrow, or Spark Connect's client) is not installed.
    ValueError
        ``master`` is not a master URL.
    ConnectionError
        A standalone master or Connect server does not answer.
    RuntimeError
        Java is missing or older than 17; the JVM did not start.
    """
    require_pyspark()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        yield SparkStart(active)
        return
    kind = master_kind(master)
    check_master(master, timeout)
    if kind == "connect":
        try:
            spark = SparkSession.builder.remote(master.strip()).getOrCreate()
        except ImportError as exc:
            raise ImportError(
                f"Spark Connect needs {exc.name or 'its client libraries'}: "
                "pip install 'pyspark[connect]'"
            ) from exc
        try:
            yield SparkStart(spark, None, True)
        finally:
            spark.stop()
        return
    if kind != "session" or not os.environ.get("SPARK_REMOTE"):
        check_java()
    conf = {"spark.ui.showConsoleProgress": "false"}
    if kind == "local":
        conf["spark.ui.enabled"] = "false"
    log = None
    if quiet and _has_fds():
        fd, log = tempfile.mkstemp(prefix="bayesrule-spark-", suffix=".log")
        os.close(fd)
    try:
        with _output_to(log) if log is not None else contextlib.nullcontext():
            spark = session(None if kind == "session" else master.strip(), **conf)
    except Exception as exc:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        where = f"; Spark's log: {log}" if log is not None else ""
        raise RuntimeError(f"Spark did not start on {master} ({text}){where}.") from exc
    failed = False
    try:
        yield SparkStart(spark, log, True)
    except BaseException:
        failed = True
        raise
    finally:
        with contextlib.suppress(Exception):
            spark.stop()
        if log is not None and not failed:
            with contextlib.suppress(OSError):
                os.remove(log)
