# The two commands a fresh machine needs: `make run` and `make test`.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml pyproject.toml

.PHONY: run test lint bench install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Rebuild the extension whenever Rust or Python sources change.
$(STAMP): $(BIN)/python $(SOURCES)
	$(BIN)/pip install --quiet -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/ndpkit evaluate

test: $(STAMP)
	cargo test --workspace --exclude ndpkit-py
	$(BIN)/python -m pytest -q -n auto -m "not slow and not serial"
	$(BIN)/python -m pytest -q -m "serial and not slow"

lint: $(STAMP)
	$(BIN)/ruff check python tests benchmarks docs/api_doc.py
	$(BIN)/ruff format --check python tests benchmarks docs/api_doc.py
	$(BIN)/mypy
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) target
