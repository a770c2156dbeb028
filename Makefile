# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
# Both create .venv and install on first use; the install is skipped while pyproject.toml is unchanged.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)

.PHONY: demo test lint typecheck layers mapcheck unit install clean gpu-check

install: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -U pip
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev]'
	@rm -f $(VENV)/.installed-*
	@touch $@

demo: $(STAMP)
	$(BIN)/python scripts/demo.py

lint: $(STAMP)
	$(BIN)/ruff check .

layers: $(STAMP)
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy stack mapper

mapcheck: $(STAMP)
	$(BIN)/stackmap check .

unit: $(STAMP)
	$(BIN)/pytest

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy stack mapper
	$(BIN)/stackmap check .
	$(BIN)/pytest

gpu-check:
	bash scripts/gpu_check.sh

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .stackmap
