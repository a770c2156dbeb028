# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
# Both create .venv and install on first use; the install is skipped while pyproject.toml is unchanged.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)

.PHONY: demo test lint typecheck layers mapcheck unit install clean gpu-check browser host-tools

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

# The host run of the tiled CUDA kernels compiles their source with g++ (C++20).
host-tools:
	@command -v g++ >/dev/null 2>&1 || { \
	  echo "installing g++ for the host kernel tests (apt-get)" >&2; \
	  $(SUDO) apt-get update -qq >/dev/null && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq g++ >/dev/null; }

# Tests that need an installed tool fail instead of skipping when it is missing under
# `make test`/`make unit`, which provision it (see tests/conftest.py `provisioned_tool`).
PROVISIONED := STACKMAP_TEST_PROVISIONED=1

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

unit: $(STAMP) browser host-tools
	$(PROVISIONED) $(BIN)/pytest

test: $(STAMP) browser host-tools
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy stack mapper web
	$(BIN)/stackmap check .
	$(PROVISIONED) $(BIN)/pytest

gpu-check:
	bash scripts/gpu_check.sh

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .stackmap
