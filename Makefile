# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
# Both create .venv and install on first use; the install is skipped while pyproject.toml is unchanged.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)

.PHONY: demo test lint typecheck layers mapcheck unit install clean gpu-check browser

install: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -U pip
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev]'
	@rm -f $(VENV)/.installed-*
	@touch $@

# The browser tests drive Debian's chromium through Playwright (never `playwright install`).
# Installed once when missing; as root in CI, through sudo elsewhere.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing chromium for the browser tests (apt-get)" >&2; \
	  $(SUDO) apt-get update -qq >/dev/null && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium >/dev/null; }

demo: $(STAMP)
	$(BIN)/python scripts/demo.py

lint: $(STAMP)
	$(BIN)/ruff check .

layers: $(STAMP)
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy stack mapper web

mapcheck: $(STAMP)
	$(BIN)/stackmap check .

unit: $(STAMP) browser
	$(BIN)/pytest

test: $(STAMP) browser
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy stack mapper web
	$(BIN)/stackmap check .
	$(BIN)/pytest

gpu-check:
	bash scripts/gpu_check.sh

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .stackmap
