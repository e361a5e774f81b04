# The README's two commands. Each creates .venv and installs what it needs on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SCENARIOS := $(wildcard scenarios/*.yml)

.PHONY: book test test-numeric-paths refresh scenarios bench clean

$(BIN)/jalapeno: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[book,test]'
	touch $@

## build the whole book (all notebooks, default parameters) into build/html
book: $(BIN)/jalapeno
	$(BIN)/jalapeno build

## run every test: unit tests, golden cases, the build, scenarios, the browser test, and nbval on every notebook
test: $(BIN)/jalapeno
	$(BIN)/python -m pytest

## every notebook again under the other floating-point paths (AVX-512 off; numpy's SIMD off), each with an
## empty cache of its own, after printing the CPU and numpy's SIMD features: a machine-dependent output fails (CI)
test-numeric-paths: $(BIN)/jalapeno
	$(BIN)/python tests/numeric_paths.py

## re-execute the committed notebooks in place (after changing the package or data)
refresh: $(BIN)/jalapeno
	$(BIN)/jalapeno refresh

## rebuild the book under every shipped scenario, each into build/scenarios/<name>
scenarios: $(BIN)/jalapeno
	for s in $(SCENARIOS); do $(BIN)/jalapeno build --scenario $$s || exit 1; done

## time the builds, a new process's first frontier and the sweep (make test's own time: benchmarks/make_test_speed.py)
bench: $(BIN)/jalapeno
	$(BIN)/python benchmarks/build_speed.py
	$(BIN)/python benchmarks/first_frontier.py
	$(BIN)/python benchmarks/serving_sweep.py

clean:
	rm -rf build $(VENV)
