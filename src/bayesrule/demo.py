"""The main job (``make demo``): discriminant analysis on wine and MNIST, one table.

Run ``python -m bayesrule.demo [--data DIR]``. It fits every model on the
wine data (118 train / 60 test, stratified, fixed seed) and, when the MNIST
files are found, on MNIST (60000 / 10000, pixels scaled to [0, 1]); it prints
test accuracy, fit and predict times, and the row-normalised confusion matrix
of LDA on MNIST (rows: true digit, columns: predicted), as in the lecture notes.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

import bayesrule

from .datasets import find_mnist, load_mnist, wine_split

__all__ = ["DemoResult", "confusion_matrix", "default_models", "format_report", "main", "run"]


@dataclass
class DemoResult:
    """Everything the demo computed.

    Attributes
    ----------
    rows : list of dict
        One per (data set, model): ``dataset``, ``model``, ``accuracy``,
        ``errors``, ``n_test``, ``fit_s``, ``predict_s``.
    confusion : ndarray of shape (10, 10) or None
        Row-normalised confusion matrix of LDA on MNIST (None without MNIST).
    models : dict
        Fitted models keyed by ``(dataset, model name)``.
    mnist_dir : str or None
        Where MNIST was read from, or None when it was not found.
    """

    rows: list[dict[str, Any]] = field(default_factory=list)
    confusion: NDArray[np.float64] | None = None
    models: dict[tuple[str, str], Any] = field(default_factory=dict)
    mnist_dir: str | None = None


def default_models(dataset: str) -> dict[str, Callable[[], Any]]:
    """Model factories for a data set: the discriminant analyses and the naive Bayes family.

    The settings are the ones a user would pick for each data set: QDA needs
    ``reg_param`` on MNIST (classes with pixels that are constant within the
    class), RDA's pair was chosen by ``RegularizedDiscriminantAnalysisCV`` (on a
    20000-row subset for MNIST: alpha=1, gamma=0.2), and the count and binary
    models only suit MNIST's pixels.
    """
    models: dict[str, Callable[[], Any]] = {"LDA": bayesrule.LinearDiscriminantAnalysis}
    if dataset == "mnist":
        models["QDA(reg_param=0.05)"] = _factory(
            bayesrule.QuadraticDiscriminantAnalysis, {"reg_param": 0.05}
        )
        models["RDA(alpha=1, gamma=0.2)"] = _factory(
            bayesrule.RegularizedDiscriminantAnalysis, {"alpha": 1.0, "gamma": 0.2}
        )
        models["MDA"] = bayesrule.MixtureDiscriminantAnalysis
    else:
        models["QDA"] = bayesrule.QuadraticDiscriminantAnalysis
        models["RDA-CV"] = bayesrule.RegularizedDiscriminantAnalysisCV
    nb: list[tuple[str, str, dict[str, Any]]] = [
        ("GaussianNB", "GaussianNB", {}),
        ("DiagonalLDA", "DiagonalLDA", {}),
    ]
    if dataset == "mnist":
        nb += [
            ("MultinomialNB", "MultinomialNB", {}),
            ("BernoulliNB(binarize=0.5)", "BernoulliNB", {"binarize": 0.5}),
            ("KernelNB", "KernelNB", {}),
        ]
    else:
        nb.append(("KernelNB", "KernelNB", {}))
    for label, name, params in nb:
        cls = getattr(bayesrule, name, None)
        if cls is not None:  # the naive Bayes family joins when it is installed
            models[label] = _factory(cls, params)
    return models


def _factory(cls: Any, params: dict[str, Any]) -> Callable[[], Any]:
    return lambda: cls(**params)


def confusion_matrix(
    y_true: NDArray[Any], y_pred: NDArray[Any], labels: NDArray[Any]
) -> NDArray[np.float64]:
    """Row-normalised confusion matrix: entry (i, j) is P(predicted j | true i)."""
    index = {v: i for i, v in enumerate(labels.tolist())}
    k = len(labels)
    counts = np.zeros((k, k))
    np.add.at(counts, ([index[v] for v in y_true.tolist()], [index[v] for v in y_pred.tolist()]), 1)
    return counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)


def _evaluate(
    dataset: str, data: tuple[Any, ...], result: DemoResult, log: Callable[[str], None]
) -> None:
    Xtr, ytr, Xte, yte = data
    for name, make in default_models(dataset).items():
        model = make()
        t0 = time.perf_counter()
        model.fit(Xtr, ytr)
        t1 = time.perf_counter()
        pred = model.predict(Xte)
        t2 = time.perf_counter()
        errors = int(np.sum(pred != yte))
        result.rows.append(
            {
                "dataset": dataset,
                "model": name,
                "accuracy": 1.0 - errors / len(yte),
                "errors": errors,
                "n_test": len(yte),
                "fit_s": t1 - t0,
                "predict_s": t2 - t1,
            }
        )
        result.models[(dataset, name)] = model
        log(f"  {dataset:<5} {name:<28} accuracy {1 - errors / len(yte):.4f}")
        if dataset == "mnist" and name == "LDA":
            result.confusion = confusion_matrix(yte, pred, model.classes_)


def run(
    data_dir: str | None = None,
    report_dir: str | None = None,
    *,
    log: Callable[[str], None] | None = None,
) -> DemoResult:
    """Fit and evaluate every model on wine and (when found) MNIST.

    Parameters
    ----------
    data_dir : str, optional
        Directory with the MNIST IDX files (default: ``$BAYESRULE_DATA`` or
        ``../shared/datasets/mnist``).
    report_dir : str, optional
        When given, ``report.txt`` with the printed report is written there.
    log : callable, optional
        Receives one line per fitted model (progress).
    """
    log = log or (lambda line: None)
    result = DemoResult()
    _evaluate("wine", wine_split(random_state=0), result, log)
    folder = find_mnist(data_dir)
    if folder is not None:
        result.mnist_dir = str(folder)
        _evaluate("mnist", load_mnist(folder), result, log)
    if report_dir is not None:
        from pathlib import Path

        from ._util.atomic import staged

        report = Path(report_dir) / "report.txt"
        report.parent.mkdir(parents=True, exist_ok=True)
        with staged(report) as targets:  # whole, or not at all
            targets[report].write_text(format_report(result) + "\n")
    return result


def format_report(result: DemoResult) -> str:
    """The demo's table and confusion matrix as plain text."""
    lines = []
    if result.mnist_dir is None:
        lines.append(
            "MNIST not found (give --data DIR or set BAYESRULE_DATA); showing the wine data only."
        )
    header = f"{'data':<6} {'model':<28} {'test accuracy':>13} {'errors':>11} {'fit (s)':>9} {'predict (s)':>12}"
    lines += [header, "-" * len(header)]
    for r in result.rows:
        lines.append(
            f"{r['dataset']:<6} {r['model']:<28} {r['accuracy']:>13.4f} "
            f"{str(r['errors']) + ' / ' + str(r['n_test']):>11} {r['fit_s']:>9.3f} {r['predict_s']:>12.3f}"
        )
    if result.confusion is not None:
        cm = result.confusion
        lines += [
            "",
            "LDA on MNIST: row-normalised confusion matrix (%; rows: true digit, columns: predicted)",
            "true\\pred " + "".join(f"{j:>6d}" for j in range(cm.shape[1])),
        ]
        for i, row in enumerate(cm):
            lines.append(f"{i:>9d} " + "".join(f"{100 * v:>6.1f}" for v in row))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bayesrule.demo", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--data", help="directory with the MNIST IDX files")
    parser.add_argument("--report", help="also write report.txt into this directory")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    result = run(args.data, args.report, log=lambda line: print(line, file=sys.stderr, flush=True))
    print(format_report(result))
    print(f"\n(total {time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
