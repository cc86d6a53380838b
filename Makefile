# Desk: `make run` sets everything up and starts the app; `make test` sets up and runs every check.
# Both are idempotent: stamps under .stamps/ skip the steps whose inputs did not change.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMPS := .stamps
WEB_SOURCES := $(shell find web/src web/public web/scripts -type f 2>/dev/null) \
	web/index.html web/vite.config.js web/package.json
PY_BUILD_INPUTS := pyproject.toml setup.py $(wildcard native/*)
PY_PATHS := desktop tests bench native scripts setup.py build.spec

.PHONY: run test check fix lint typecheck jstest pytest pytest-ui pytest-rest fast-tests package wheel setup setup-test clean

run: setup
	$(BIN)/desk

test: setup-test lint typecheck jstest pytest

# The quick loop while working (under a minute): lint, types and every test that needs no
# browser, window, bundle, soak or service restart (the `restart` marker: kill -9 or restart
# scenarios of several seconds each), on three workers (`make test` runs them all). The three
# run side by side, each one's output printed whole when it ends.
check: setup
	@$(MAKE) --no-print-directory -j3 --output-sync=target lint typecheck fast-tests

# Rewrites what ruff can mend by itself (lint fixes, then formatting).
fix: $(STAMPS)/venv
	$(BIN)/ruff check --fix $(PY_PATHS)
	$(BIN)/ruff format $(PY_PATHS)

setup: $(STAMPS)/system-run $(STAMPS)/venv web/dist/index.html
setup-test: $(STAMPS)/system-test $(STAMPS)/venv web/dist/index.html

$(STAMPS)/system-run: scripts/system-deps.sh
	@mkdir -p $(STAMPS)
	@scripts/system-deps.sh run
	@touch $@

$(STAMPS)/system-test: scripts/system-deps.sh
	@mkdir -p $(STAMPS)
	@scripts/system-deps.sh test
	@touch $@ $(STAMPS)/system-run $(STAMPS)/system-package

$(STAMPS)/system-package: scripts/system-deps.sh
	@mkdir -p $(STAMPS)
	@scripts/system-deps.sh package
	@touch $@ $(STAMPS)/system-run

# The package is installed editable, which also compiles the cffi PTY module in place.
$(STAMPS)/venv: $(PY_BUILD_INPUTS)
	@mkdir -p $(STAMPS)
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "desk: Python 3.11 or newer is needed (python3 is " + sys.version.split()[0] + ")")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip setuptools wheel cffi
	@# The distribution is `desk`; a venv made when it was called `desktop` drops that one.
	@$(BIN)/python -m pip uninstall -q -y desktop 2>/dev/null || true
	$(BIN)/python -m pip install -q --no-build-isolation -e '.[desktop,test,package]'
	@touch $@

web/node_modules/.package-lock.json: web/package-lock.json
	cd web && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

web/dist/index.html: web/node_modules/.package-lock.json $(WEB_SOURCES)
	cd web && npm run build --silent
	@touch $@

lint: $(STAMPS)/venv web/node_modules/.package-lock.json
	$(BIN)/ruff check $(PY_PATHS)
	$(BIN)/ruff format --check $(PY_PATHS)
	cd web && npm run lint --silent

typecheck: $(STAMPS)/venv
	$(BIN)/mypy

# The UI's unit tests (vitest + jsdom); XSS checks stay in Chromium (tests/browser).
jstest: web/node_modules/.package-lock.json
	cd web && npm test --silent

# Every test, then the ten slowest of each half. The tests that drive Chromium, the window or
# the bundle run in one pytest and all the others in a second beside it (each half is serial,
# and each prints whole when it ends): the two cores are busy with one half while the other
# waits on a page, a window or a build.
pytest: setup-test
	@$(MAKE) --no-print-directory -j2 --output-sync=target pytest-ui pytest-rest

UI_TESTS := browser or desktop or package

pytest-ui:
	$(BIN)/pytest -q --durations=10 -m "$(UI_TESTS)"

pytest-rest:
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest -q --durations=10 -m "not ($(UI_TESTS))"

# Python may cache compiled modules even where PYTHONDONTWRITEBYTECODE is set: else every
# worker, `desk serve` and PTY host the tests start compiles Desk's sources again. Three
# workers on two cores: most tests spend their time waiting on the processes they start.
fast-tests: setup
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest -q -n 3 \
		-m "not browser and not desktop and not package and not soak and not restart"

# The one-folder bundle (dist/Desk/Desk) and the Debian package made from it
# (dist/desk_<version>_<arch>.deb, scripts/build_deb.py).
package: setup $(STAMPS)/system-package
	$(BIN)/pyinstaller --noconfirm --log-level WARN build.spec
	@echo "Built dist/Desk/Desk"
	$(BIN)/python scripts/build_deb.py dist/Desk dist

# A wheel for pip/pipx (dist/desk-<version>-<python>-<platform>.whl): the package, the built
# web UI and the compiled PTY module; its dependencies come from the index (or a wheelhouse).
wheel: setup
	$(BIN)/python -m pip wheel --no-deps --no-build-isolation --wheel-dir dist .

clean:
	rm -rf $(STAMPS) build dist web/dist
