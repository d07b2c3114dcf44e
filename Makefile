# Two commands for a fresh machine (see README.md):
#   make lab    set up .venv and open the book in JupyterLab (in Chinese)
#   make test   set up .venv and run the whole test suite (unit, doctests, nbval, site, browser)
# and a few more:
#   make site                 the static website in _build/html (Jupyter Book 1, offline, from stored outputs)
#   make pdf                  the whole book as one PDF, _build/hetlab-book.pdf (headless Chromium, offline)
#   make test-lib PYTHON=...  a fresh venv with that interpreter, library tests only (no notebooks, no browser)
#   make test-binder          binder/requirements.txt + binder/postBuild in a fresh venv, every chapter under nbval
#   make pins                 regenerate binder/requirements.txt from constraints.txt
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install -q --disable-pip-version-check -c constraints.txt
STAMP := $(VENV)/.installed

.PHONY: lab test venv lint bench bench-saga-venv clean system-deps chapters site pdf test-lib test-binder pins

# Re-installs whenever pyproject.toml, constraints.txt or the Lab settings change (a fresh clone has no stamp).
$(STAMP): pyproject.toml constraints.txt binder/overrides.json $(wildcard binder/learner/*.json binder/learner/*/*.json)
	$(PYTHON) -m venv $(VENV)
	$(PIP) -e ".[book,site,test]"
	@# JupyterLab's default settings for this environment: the interface in Chinese (as on Binder).
	mkdir -p $(VENV)/share/jupyter/lab/settings
	cp binder/overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	@# The learners' Jupyter config folder, a copy: Jupyter writes into its config folder, never into the repository.
	rm -rf $(VENV)/learner-config && cp -r binder/learner $(VENV)/learner-config
	touch $(STAMP)

venv: $(STAMP)

system-deps:
	@bash scripts/system-deps.sh

# The learners' JupyterLab: the venv also holds nbgrader (make test needs it), whose English menu, Validate button
# and side tab are instructor tools; binder/learner (copied into the venv) switches them off. Lab settings and
# workspaces stay in ~/.jupyter.
lab: system-deps venv
	JUPYTER_CONFIG_DIR="$(CURDIR)/$(VENV)/learner-config" \
	JUPYTERLAB_SETTINGS_DIR="$${JUPYTERLAB_SETTINGS_DIR:-$$HOME/.jupyter/lab/user-settings}" \
	JUPYTERLAB_WORKSPACES_DIR="$${JUPYTERLAB_WORKSPACES_DIR:-$$HOME/.jupyter/lab/workspaces}" \
	$(VENV)/bin/jupyter lab chapters/01-visual-demo.ipynb $(if $(filter 0,$(shell id -u)),--allow-root,)

test: system-deps venv
	$(PY) -m ruff check hetlab tests benchmarks tools scripts book/_ext
	$(PY) -m pytest -q --doctest-modules hetlab tests --nbval chapters --nbval-sanitize-with chapters/sanitize.cfg --nbval-cell-timeout 10 -m "not binder"

site: venv
	$(PY) scripts/build_site.py

pdf: system-deps venv
	$(PY) scripts/build_pdf.py

# Library tests only, in a fresh venv of the given interpreter (e.g. PYTHON=~/.pyenv/versions/3.13.0/bin/python).
test-lib:
	@$(PYTHON) --version || { echo "test-lib: $(PYTHON) does not run" >&2; exit 1; }
	$(PYTHON) scripts/test_lib.py

test-binder: venv
	$(PY) -m pytest -q tests/test_binder.py -m binder

pins: venv
	$(PY) scripts/pins.py --write

chapters: venv
	$(PY) tools/execute_chapters.py

bench: venv
	$(PY) benchmarks/run_all.py

# anrg-saga (for benchmark 2) needs Python >= 3.12 and ~700 MB: its own venv, never a hetlab dependency.
# The first candidate that actually runs (a pyenv shim of a non-selected version exists but fails).
PYTHON312 ?= $(shell for p in python3.12 $$HOME/.pyenv/versions/3.12*/bin/python python3.13 $$HOME/.pyenv/versions/3.13*/bin/python; do \
	"$$p" --version >/dev/null 2>&1 && "$$p" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null \
	&& { command -v "$$p"; break; }; done)
bench-saga-venv:
	@test -n "$(PYTHON312)" || { echo "bench-saga-venv: no Python >= 3.12 runs here (pyenv install 3.12)" >&2; exit 1; }
	$(PYTHON312) --version
	$(PYTHON312) -m venv benchmarks/.venv-saga
	benchmarks/.venv-saga/bin/pip install -q anrg-saga

clean:
	rm -rf $(VENV) build *.egg-info _build
