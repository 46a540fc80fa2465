# PPy: the README's two commands.
#   make demo   set up .venv (if needed) and run the headline example
#   make test   set up .venv (if needed), run every distribution's tests, then core alone
# Other targets: bench, docs, matrix (tox), lint, dist (sdist + wheel of every distribution), clean.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := demo

PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
CORE_VENV ?= build/venv-core
PYTEST_ARGS ?=

# Every distribution is a folder with a pyproject.toml: core, packages/*, backends/*.
# A folder without one (a distribution still being written) is skipped.
DISTS := core $(patsubst %/pyproject.toml,%,$(sort $(wildcard packages/*/pyproject.toml backends/*/pyproject.toml)))
# The example third-party plugin, installed too (off until a project enables it, as its
# demo does), so that `ppy check examples/` types the demo with it.
EXAMPLE_PLUGINS := examples/plugins/ppy-autograd
# What decides the installed set: re-install only when one of these changed.
INSTALL_INPUTS := $(addsuffix /pyproject.toml,$(DISTS) $(EXAMPLE_PLUGINS)) \
  $(wildcard $(addsuffix /setup.py,$(DISTS)))
# ... and the third-party plugin, from its own wheel in a fresh venv (examples/plugins).
TEST_DIRS := $(wildcard $(addsuffix /tests,$(DISTS))) examples/plugins/test_third_party.py \
  benchmarks/check_corpus/test_corpus.py
STAMP := $(VENV)/.ppy-installed
CORE_STAMP := $(CORE_VENV)/.ppy-installed

.PHONY: demo test test-dists test-core docs matrix bench lint dist clean setup

# -- setup -------------------------------------------------------------------------------

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# One pip call installs every distribution, editable, with its test extra (and the example plugin).
$(STAMP): $(INSTALL_INPUTS) | $(BIN)/python
	$(BIN)/python -m pip install --quiet $(foreach d,$(DISTS),-e '$(d)[test]') \
	  $(foreach d,$(EXAMPLE_PLUGINS),-e '$(d)')
	@touch $@

# A venv with core alone (no library, no plugin): core must install and pass there.
$(CORE_STAMP): core/pyproject.toml
	rm -rf $(CORE_VENV)
	$(PYTHON) -m venv $(CORE_VENV)
	$(CORE_VENV)/bin/python -m pip install --quiet -e 'core[test]'
	@touch $@

setup: $(STAMP)

# -- the two commands --------------------------------------------------------------------

# The headline examples: NumPy fusion, then an ATen region.
demo: $(STAMP)
	$(BIN)/ppy examples/01_numpy_fusion/fusion.ppy
	cd examples/12_arrow && ../../$(BIN)/ppy arrow.ppy | grep -v '^#'
	cd examples/09_torch && ../../$(BIN)/ppy torch_region.ppy

test: test-dists test-core docs

# One pytest run per distribution, so that their conftest.py and same-named test
# files never meet; every run goes on, and the failures are listed at the end.
test-dists: $(STAMP)
	@failed=""; for t in $(TEST_DIRS); do \
	  echo "== $$t"; rc=0; $(BIN)/python -m pytest $$t $(PYTEST_ARGS) || rc=$$?; \
	  if [ $$rc -ne 0 ] && [ $$rc -ne 5 ]; then failed="$$failed $$t"; fi; \
	done; \
	if [ -n "$$failed" ]; then echo "FAILED:$$failed"; exit 1; fi

# Core alone; the slow packaging test (wheels into a fresh venv) already ran above.
test-core: $(CORE_STAMP)
	$(CORE_VENV)/bin/python -m pytest core/tests -m 'not slow' -p no:cacheprovider $(PYTEST_ARGS)

# -- the rest ----------------------------------------------------------------------------

# The documentation (docs/, MkDocs), warnings as errors; its pages run real commands.
DOCS_STAMP := $(VENV)/.ppy-docs
$(DOCS_STAMP): docs/requirements.txt | $(STAMP)
	$(BIN)/python -m pip install --quiet -r docs/requirements.txt
	@touch $@

docs: $(STAMP) $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet
	@echo "docs: build/site/index.html"

# Every distribution against each library version it supports (tox.ini), in fresh venvs.
matrix: $(STAMP)
	$(BIN)/python -m pip install --quiet 'tox>=4'
	$(BIN)/tox run-parallel --parallel auto --parallel-no-spinner

# Every benchmark in benchmarks/ (run_all.py discovers them), each in its own process,
# with progress; tables, charts and logs land in benchmarks/results/ (index.md lists
# them). The anchors they compare against (numba, numexpr, matplotlib for the charts,
# ...) come from benchmarks/requirements.txt. BENCH_ARGS='--only numpy_fusion' narrows.
BENCH_ARGS ?=
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -r benchmarks/requirements.txt
	$(BIN)/python benchmarks/run_all.py $(BENCH_ARGS)

lint: $(STAMP)
	@$(BIN)/python -m pip install --quiet ruff
	$(BIN)/ruff check $(DISTS) conftest.py
	$(BIN)/ruff format --check $(DISTS) conftest.py

dist: $(STAMP)
	@for d in $(DISTS); do \
	  echo "== $$d"; $(BIN)/python -m build --sdist --wheel --outdir build/dist "$$d" >/dev/null; \
	done
	@ls build/dist

clean:
	rm -rf build $(STAMP) .pytest_cache
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +
