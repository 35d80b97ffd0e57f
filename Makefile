# configwatch: `make demo` runs the whole system, `make test` runs the test suite.
# Both set everything up first: .venv with the package and its dev extras, then
# the pinned JVM jars (Maven). Re-running skips what is already done.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
export PYSPARK_PYTHON := $(abspath $(BIN)/python)

.PHONY: help setup jars sysdeps test demo lint bench eval dist clean

help:
	@echo "make demo   - set up, then run the whole system on embedded defaults"
	@echo "make test   - set up, then run the test suite (real Kafka broker and Spark)"
	@echo "make lint   - ruff and mypy"
	@echo "make eval   - detection precision/recall on the labelled evaluation fleet (SEED, SIZE)"
	@echo "make bench  - set up, then run every benchmark figure (QUICK=1: a two-minute smoke run)"
	@echo "make dist   - the wheel for spark-submit (dist/: .whl, and a .zip copy for --py-files)"
	@echo "make clean  - remove .venv and build output (the jar cache stays)"

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev,bench]"
	@touch $(STAMP)

setup: $(STAMP) jars

jars: $(STAMP)
	@$(BIN)/python -m configwatch.jars

sysdeps:
	@scripts/system-deps.sh

test: setup sysdeps
	$(BIN)/python -m pytest -n 2 $(PYTEST_ARGS)

demo: setup
	$(BIN)/configwatch demo

# Writes bench/results/latest.json and the generated table in docs/benchmarks.md.
bench: setup
	$(BIN)/python -m bench.run $(if $(QUICK),--quick) $(BENCH_ARGS)

# The labelled evaluation set of tests/eval (docs/detection.md, Evaluation): no Spark, no Kafka.
SEED ?= 13
SIZE ?= 3000
eval: $(STAMP)
	$(BIN)/python -W ignore::FutureWarning -m tests.eval --seed $(SEED) --size $(SIZE) $(EVAL_ARGS)

# The project's code for a cluster (docs/operations.md, "On a Spark cluster"): nothing is compiled.
dist: $(STAMP)
	rm -rf dist && $(BIN)/python -m pip wheel --no-deps -q -w dist .
	cd dist && for w in *.whl; do cp "$$w" "$${w%.whl}.zip"; done

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
