# prefixgate: two commands. `make run` and `make test` each set everything up from nothing.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8080
HOST ?= 127.0.0.1
PYTEST_ARGS ?=

.PHONY: run test install lint clean format

# The virtualenv with the package (editable), the local engine (torch CPU build) and the
# test tools. Re-made when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,local]'
	touch $@

install: $(VENV)/.installed

# The proxy at http://$(HOST):$(PORT), in front of a local upstream; no API keys needed.
run: install
	$(VENV)/bin/prefixgate demo --host $(HOST) --port $(PORT)

# Lint and format check (ruff), then all tests. Starts a throwaway redis-server when none
# answers at 127.0.0.1:6379.
test: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m pytest -q $(PYTEST_ARGS)

# Format the code and apply ruff's safe fixes.
format: install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
