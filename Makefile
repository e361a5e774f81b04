# The README's two commands. Each creates .venv and installs what it needs on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SCENARIOS := $(wildcard scenarios/*.yml)

.PHONY: book test test-numeric-paths refresh scenarios bench compiled clean

$(BIN)/jalapeno: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[book,test]'
	touch $@

# the package's bytecode, compiled as pip compiles every dependency it installs (an editable install has
# none): where PYTHONDONTWRITEBYTECODE is set, as on CI's machines, every process (each notebook's kernel,
# each worker) would otherwise compile the package's modules again, about 0.3 to 0.5 s; only changed modules
# are compiled again
compiled: $(BIN)/jalapeno
	$(BIN)/python -m compileall -q jalapeno

## build the whole book (all notebooks, default parameters) into build/html
book: compiled
	$(BIN)/jalapeno build

## run every test: unit tests, golden cases, the build, scenarios, the browser test, and nbval on every notebook
test: compiled
	$(BIN)/python -m pytest

## every notebook again under the other floating-point paths (AVX-512 off; numpy's SIMD off), each with an
## empty cache of its own, after printing the CPU and numpy's SIMD features: a machine-dependent output fails (CI)
test-numeric-paths: compiled
	$(BIN)/python tests/numeric_paths.py

## re-execute the committed notebooks in place (after changing the package or data)
refresh: compiled
	$(BIN)/jalapeno refresh

## rebuild the book under every shipped scenario, each into build/scenarios/<name>
scenarios: compiled
	for s in $(SCENARIOS); do $(BIN)/jalapeno build --scenario $$s || exit 1; done

## time the builds, a new process's first frontier and the sweep (make test's own time: benchmarks/make_test_speed.py)
bench: compiled
	$(BIN)/python benchmarks/build_speed.py
	$(BIN)/python benchmarks/first_frontier.py
	$(BIN)/python benchmarks/serving_sweep.py

clean:
	rm -rf build $(VENV)
