# make demo / make test on a fresh clone: only python3 (>= 3.11) is needed.

VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.stamp

.PHONY: venv test lint unit filecheck demo format clean

# Create the venv once; reinstall only when pyproject.toml changes.
venv: $(STAMP)

$(BIN)/python:
	python3 -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install -e '.[test]'
	touch $(STAMP)

test: lint unit filecheck

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/basedpyright

# test/gpu runs where pycuda and a CUDA device are present, and is skipped
# (with the reason) elsewhere.
unit: venv
	$(BIN)/pytest -n 2 test/unit test/e2e test/gpu

filecheck: venv
	$(BIN)/lit -v test

demo: venv
	$(BIN)/python examples/demo.py
	$(BIN)/python examples/train_numpy.py

# Benchmark against NumPy and PyTorch CPU (writes bench/RESULTS.md): the
# forward rows, each kernel also tuned for 15 s (the tuned column, the tuning
# time, a new process's cold start on the cache it filled, the strategies
# compared on one kernel), and the backward rows; about 10 min on a 2-core VM.
# Other arguments: make bench BENCH_ARGS="--quick" (or --only, --threads,
# --tune-budget-s 0 for no tuning ...).
BENCH_ARGS ?= --tune-budget-s 15
BENCH_STAMP := $(VENV)/.bench-stamp

.PHONY: bench

$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install -e '.[bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python -m bench $(BENCH_ARGS)

# The GPU benchmark (bench/cuda: ours vs PyTorch eager and torch.compile on
# CUDA device 0; writes bench/RESULTS-cuda.md). Needs the `gpu` extra (pycuda)
# and a GPU. On the lent GPU machine: bench/device_run.sh.
.PHONY: bench-gpu
bench-gpu: $(BENCH_STAMP)
	$(BIN)/python -m pip install -e '.[gpu]'
	$(BIN)/python -m bench.cuda $(BENCH_ARGS)

format: venv
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf build *.egg-info .pytest_cache .ruff_cache .hypothesis .lit_test_times.txt
	find . -path ./$(VENV) -prune -o -type d -name Output -exec rm -rf {} +
	find . -path ./$(VENV) -prune -o -type d -name __pycache__ -exec rm -rf {} +
