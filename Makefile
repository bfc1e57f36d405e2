# The two commands a newcomer needs: `make release` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.DEFAULT_GOAL := help
.PHONY: help venv release stubs test lint bench gradescope-image clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(STAMP): requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

venv: $(STAMP) ## create .venv with the pinned dependencies

stubs: $(STAMP) ## regenerate student_template/ from solutions/
	$(PY) -m autograder stubs

release: $(STAMP) ## regenerate stubs, build dist/<assignment>/*.zip and self-check them
	$(PY) -m autograder release

test: $(STAMP) ## run the kit's own tests
	$(PY) -m pytest tests -q -n 2 --dist load --durations=15

lint: $(STAMP) ## ruff
	$(PY) -m ruff check autograder tests solutions assignments
	$(PY) -m ruff format --check autograder tests

bench: $(STAMP) ## measure grading time and memory; writes the table into README.md
	$(PY) -m autograder bench --setup --write-readme

gradescope-image: $(STAMP) ## run setup.sh for real in a fresh Debian root (root, debootstrap; minutes)
	$(PY) tests/gradescope_image.py

clean: ## remove build outputs (keeps .venv)
	rm -rf dist build .pytest_cache
