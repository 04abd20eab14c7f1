# `make demo` runs the main job, `make test` the whole test suite. Both create
# .venv and install what they need on first use (only python3 and make needed).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEST_WORKERS ?= 2

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

export BAYESRULE_DATA

demo: $(STAMP)
	$(VENV)/bin/bayesrule demo --output report

# two worker processes (CI has 2 cores); tests that share one Spark JVM or
# one Dask cluster carry an xdist_group mark and run on the same worker
test: $(STAMP)
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadgroup --durations=30

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks
	$(VENV)/bin/mypy src

bench: $(STAMP)
	$(PY) benchmarks/bench_discriminant.py
	$(PY) benchmarks/bench_naive_bayes.py
	$(PY) benchmarks/bench_rda_cv.py
	$(PY) benchmarks/bench_kernel_nb.py
	$(PY) benchmarks/accuracy_shrinkage.py
	$(PY) benchmarks/bench_busy.py
	$(PY) benchmarks/bench_loo.py
	$(PY) benchmarks/bench_mda.py
	$(PY) benchmarks/bench_feature_ranges.py
	$(PY) benchmarks/bench_mixed_kinds.py
	$(PY) benchmarks/bench_dask.py
	$(PY) benchmarks/bench_out_of_core.py
	$(PY) benchmarks/bench_defaults.py

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
