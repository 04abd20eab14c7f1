"""An estimator from the command line: ``--model``, ``--set``, priors, ``--kind``."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ..estimators.registry import get_estimator
from ._common import is_table_model
from ._data import (
    UsageError,
    match_columns,
    split_names,
)
from ._errors import clean


def _parse_value(text: str) -> Any:
    """A --set value: JSON (numbers, true/false/null, lists), Python's True/False/None, or a string."""
    python = {"True": True, "False": False, "None": None}
    if text in python:
        return python[text]
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def build_estimator(model: str, settings: list[str]) -> Any:
    try:
        cls = get_estimator(model)
    except ValueError as exc:
        raise UsageError(f"--model: {exc}") from None
    est = cls()
    known = est.get_params(deep=False)
    params: dict[str, Any] = {}
    for item in settings:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UsageError(f"--set {item!r}: expected name=value.")
        if name not in known:
            raise UsageError(
                f"--set {name}: {cls.__name__} has no parameter {name!r}; its parameters are "
                f"{', '.join(sorted(known))}."
            )
        params[name] = _parse_value(value)
    est.set_params(**params)
    try:
        est.check_params()
    except ValueError as exc:
        raise UsageError(f"--set: {clean(str(exc))}") from None
    return est


def priors_to_labels(est: Any, y: Any) -> None:
    """``--set 'priors={"1": 0.3, ...}'`` on numeric labels: JSON keys are text, so each
    key is matched to the label it spells. A key that spells no label is left for the
    estimator to refuse, naming it."""
    for name in ("priors", "class_prior"):
        value = est.get_params(deep=False).get(name)
        if not isinstance(value, dict) or y is None:
            continue
        labels = {str(v): v for v in np.unique(np.asarray(y)).tolist()}
        if all(isinstance(v, str) for v in labels.values()):
            continue
        est.set_params(**{name: {labels.get(str(k), k): p for k, p in value.items()}})


def with_kinds(est: Any, kinds: list[str], features: list[str]) -> None:
    """``--kind col=kind`` (names or globs, ``a,b=kind`` for several) added to MixedNB's ``columns``."""
    if not kinds:
        return
    if not is_table_model(est):
        raise UsageError(
            f"--kind sets the model of a column for --model mixed; {type(est).__name__} "
            "models every column alike."
        )
    current = est.get_params(deep=False)["columns"]
    if isinstance(current, list):
        raise UsageError("--kind cannot be combined with --set columns=[...] (a list of kinds).")
    spec: dict[str, Any] = dict(current or {})
    for item in kinds:
        name, sep, kind = item.partition("=")
        if not sep or not name.strip() or not kind.strip():
            raise UsageError(
                f"--kind {item!r}: expected column=kind, e.g. --kind year=categorical."
            )
        for col in match_columns(split_names([name]), features, "--kind"):
            spec[col] = kind.strip()
    est.set_params(columns=spec)
