# The README's two commands. Each creates .venv and installs what it needs on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: book test refresh clean

$(BIN)/jalapeno: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[book,test]'
	touch $@

## build the whole book (all notebooks, default parameters) into build/html
book: $(BIN)/jalapeno
	$(BIN)/jalapeno build

## run every test: unit tests, golden cases, the build, and nbval on every notebook
test: $(BIN)/jalapeno
	$(BIN)/python -m pytest

## re-execute the committed notebooks in place (after changing the package or data)
refresh: $(BIN)/jalapeno
	$(BIN)/jalapeno refresh

clean:
	rm -rf build $(VENV)
