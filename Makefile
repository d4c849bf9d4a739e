# The developer command surface. `make help` lists the targets.
PY ?= python3

.PHONY: help install format lint types test test-slow bench bench-quick check catalogs pictures
help:  ## list targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

install:  ## install with every extra, editable
	$(PY) -m pip install -e '.[dev]'

format:  ## format the code
	$(PY) -m ruff format core coven_desktop tests benchmarks packaging
	$(PY) -m ruff check --fix core coven_desktop tests benchmarks packaging

lint:  ## lint (ruff), check formatting and the import contracts (pyproject: importlinter)
	$(PY) -m ruff check core coven_desktop tests benchmarks packaging
	$(PY) -m ruff format --check core coven_desktop tests benchmarks packaging
	lint-imports --no-logo --cache-dir build/import-linter

types:  ## type-check (strict for the engine)
	@# core/ is installed as coven_core; give mypy that name through a symlink.
	mkdir -p build/typecheck && ln -sfn ../../core build/typecheck/coven_core
	MYPYPATH=build/typecheck $(PY) -m mypy -p coven_core -p coven_desktop

catalogs:  ## extract the messages (resources/locale/coven.pot) and update every language's .po
	@# pybabel reads its settings from pyproject.toml ([tool.babel.*]); run from the repository root.
	$(PY) -m babel.messages.frontend extract
	$(PY) -m babel.messages.frontend update

test:  ## the README's test command
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest

test-slow:  ## include the slow tests
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest --run-slow

bench:  ## the benchmark suite: one table, build/bench/suite.json
	QT_QPA_PLATFORM=offscreen $(PY) -m benchmarks

bench-quick:  ## the benchmark suite, a fast pass
	QT_QPA_PLATFORM=offscreen $(PY) -m benchmarks --quick

SECONDS ?= 600
.PHONY: soak
soak:  ## the strict simulation on fresh random seeds, every core, for SECONDS (default 600)
	QT_QPA_PLATFORM=offscreen $(PY) -m tests.core.soak --seconds $(SECONDS)

.PHONY: bundle
bundle:  ## the self-contained Linux bundle in dist/coven (pip install -e '.[packaging]' first)
	QT_QPA_PLATFORM=offscreen $(PY) -m PyInstaller packaging/coven.spec --noconfirm \
		--distpath dist --workpath build/pyinstaller

check: lint types test  ## everything CI should be happy with

pictures:  ## the README's pictures (en/de, light/dark) into docs/pictures, by the demo renderer
	QT_QPA_PLATFORM=offscreen $(PY) packaging/pictures.py
