# Two commands for a fresh machine (see README.md):
#   make lab    set up .venv and open the book in JupyterLab
#   make test   set up .venv and run the whole test suite (unit, doctests, nbval, browser)
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install -q --disable-pip-version-check -c constraints.txt
STAMP := $(VENV)/.installed

.PHONY: lab test venv lint bench bench-saga-venv clean system-deps chapters

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) -e ".[book,test]"
	touch $(STAMP)

venv: $(STAMP)

system-deps:
	@bash scripts/system-deps.sh

lab: system-deps venv
	$(VENV)/bin/jupyter lab chapters/01-visual-demo.ipynb $(if $(filter 0,$(shell id -u)),--allow-root,)

test: system-deps venv
	$(PY) -m ruff check hetlab tests benchmarks tools
	$(PY) -m pytest -q --doctest-modules hetlab tests --nbval chapters --nbval-sanitize-with chapters/sanitize.cfg --nbval-cell-timeout 10

chapters: venv
	$(PY) tools/execute_chapters.py

bench: venv
	$(PY) benchmarks/run_all.py

# anrg-saga (for benchmark 2) needs Python >= 3.12 and ~700 MB: its own venv, never a hetlab dependency.
PYTHON312 ?= $(shell command -v python3.12 || ls -d /root/.pyenv/versions/3.12*/bin/python 2>/dev/null | tail -n 1)
bench-saga-venv:
	$(PYTHON312) -m venv benchmarks/.venv-saga
	benchmarks/.venv-saga/bin/pip install -q anrg-saga

clean:
	rm -rf $(VENV) build *.egg-info
