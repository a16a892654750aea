# The two commands of the quick start: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck venv clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

## Install gpulint into .venv and lint the bundled examples (exits 0 even with findings).
demo: $(STAMP)
	@echo "$$ gpulint check examples/"
	@$(BIN)/gpulint check examples/ || true

## Install test dependencies and run the whole suite: pytest, ruff, mypy.
test: $(STAMP)
	$(BIN)/python -m pytest
	$(BIN)/ruff check gpulint rules tests $(wildcard bench)
	$(BIN)/ruff format --check gpulint rules
	$(BIN)/mypy

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
