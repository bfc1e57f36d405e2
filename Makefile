# The two commands a newcomer needs: `make release` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# The venv is rebuilt when what it is installed from changed by content, not by date: the stamp holds their
# hash (tools/venv_stamp.py), so a fresh clone sharing a venv (`make VENV=/shared/venv ...`) does not reinstall.
VENV_INPUTS := requirements.txt requirements-dev.txt pyproject.toml
VENV_STALE := $(shell $(PYTHON) tools/venv_stamp.py check $(STAMP) $(VENV_INPUTS) 2>&1)

.DEFAULT_GOAL := help
.PHONY: FORCE help venv release stubs test proofs determinism snapshot mutants caught-by flakes lint bench gradescope-image student-setup docs docs-serve clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

# torch comes from PyTorch's CPU wheel index (a plain `pip install torch` on Linux is the CUDA
# build, about 3 GB more). Where that index cannot be reached, the recipe says so and falls back
# to pip's configured index (set TORCH_INDEX_URL to a reachable CPU mirror instead).
TORCH_INDEX_URL ?= https://download.pytorch.org/whl/cpu
TORCH_VERSION := $(shell sed -n 's/^torch==//p' requirements.txt)

SITE = $$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

$(STAMP): $(if $(VENV_STALE),FORCE)
	@echo "$(VENV_STALE)"
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@echo "installing torch==$(TORCH_VERSION) (CPU build) from $(TORCH_INDEX_URL)"
	@$(PY) -m pip install --quiet --no-compile --timeout 15 --retries 1 --index-url $(TORCH_INDEX_URL) "torch==$(TORCH_VERSION)" \
	  || { echo "make venv: could not install torch from $(TORCH_INDEX_URL); falling back to pip's configured index" \
	       "(on a plain Linux machine that is the CUDA build: point TORCH_INDEX_URL at a reachable CPU index)"; \
	       $(PY) -m pip install --quiet --no-compile "torch==$(TORCH_VERSION)"; }
	$(PY) -m pip install --quiet --no-compile -r requirements-dev.txt
	$(PY) -m pip install --quiet --no-compile "setuptools>=64"
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .   # the attention-kit command (python -m autograder from any folder)
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	@# pip byte-compiles each package as it installs it, on one core; compiling the whole venv once, on every core,
	@# is faster (its only errors are torch's Python 3.12-only test files, which pip skips silently too)
	$(PY) -m compileall -q -j 0 "$(SITE)" >/dev/null 2>&1 || true
	$(PYTHON) tools/venv_stamp.py write $(STAMP) $(VENV_INPUTS)

FORCE:

venv: $(STAMP) ## create .venv with the pinned dependencies

stubs: $(STAMP) ## regenerate student_template/ from solutions/
	$(PY) -m autograder stubs

release: $(STAMP) ## regenerate stubs, build dist/<assignment>/*.zip and prove each assignment (the self-check)
	$(PY) -m autograder release

test: $(STAMP) ## the kit's own tests, unit and end to end (under 4 min; CI also runs make release)
	$(PY) -m pytest tests -q -n 2 --dist load --durations=15 -m "not proof"

proofs: $(STAMP) ## the slow proofs of the kit's design (the red team's attacks, a scaffolded assignment releases, forged evidence earns nothing, determinism); CI runs them
	$(PY) -m pytest tests -q -n 2 --dist load --durations=10 -m proof

# UNPINNED: the assignments of the unpinned report (all six when empty; CI names two, see .ci/run)
UNPINNED ?=

determinism: $(STAMP) ## grade the catalogue again under other CPU kernels, threads and hash seeds: the same points and names (after make release; minutes)
	$(PY) -m autograder determinism --settings pinned
	@# without the pin (other kernels, two torch threads): a difference names a test on a knife edge; reported, not fatal,
	@# since only the pinned grading is what students get
	-$(PY) -m autograder determinism $(UNPINNED) --settings unpinned

snapshot: $(STAMP) ## write snapshots/<a>.json (every catalogue grading: points, kinds, names per test) and list what changed (after make release)
	$(PY) -m autograder snapshot

mutants: $(STAMP) ## derive one-site mutants of each reference: mutation score per assignment; fails on an unrecorded survivor
	$(PY) -m autograder mutants

caught-by: $(STAMP) ## grade every catalogued mistake on every test (cached): each CAUGHT_BY that misses a test the mistake fails, and the list that matches (minutes)
	$(PY) -m autograder caught-by

flakes: $(STAMP) ## the reference passes every test under 20 input seeds, every suite (about 10 min; before changing tests)
	ls assignments/*/assignment.toml | cut -d/ -f2 | xargs -P 2 -I{} $(PY) -m autograder seeds {} --count 20

lint: $(STAMP) ## ruff
	$(PY) -m ruff check autograder tests solutions assignments tools
	$(PY) -m ruff format --check autograder tests tools

bench: $(STAMP) ## measure grading time and memory; writes the table into docs/measurements/bench.md
	$(PY) -m autograder bench --setup --write-docs

gradescope-image: $(STAMP) ## run setup.sh, and the PrairieLearn Dockerfile's steps, for real in a fresh Debian root (root, debootstrap; minutes)
	$(PY) tests/gradescope_image.py
	$(PY) tests/prairielearn_image.py

# The handout's Linux lines run as written; the one variable they read is TORCH_INDEX_URL (above).
student-setup: $(STAMP) ## a handout's Linux lines, as written, in a fresh venv: public tests, notebook, otter check (minutes)
	KIT_STUDENT_SETUP=1 TORCH_INDEX_URL=$(TORCH_INDEX_URL) $(PY) -m pytest tests/test_student_setup.py -q -s

# The documentation site (docs/, mkdocs.yml; MkDocs with the Material theme, pinned in requirements-dev.txt).
# tools/gen_docs.py writes the reference pages generated from the code (the CLI's parser, the config schema)
# first; --strict makes any warning (a broken link, a page missing from the nav) an error.
DOCS_SITE := build/site

docs: $(STAMP) ## build the documentation site into build/site (strict: a broken link fails)
	$(PY) tools/gen_docs.py
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir $(DOCS_SITE)

docs-serve: $(STAMP) ## preview the documentation site at http://127.0.0.1:8000 (rebuilds on save)
	$(PY) tools/gen_docs.py
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve --dev-addr 127.0.0.1:8000

clean: ## remove build outputs and the self-check cache (keeps .venv)
	rm -rf dist build .pytest_cache .cache .bench
