# Attention, Step by Step — every command a reader or CI needs.
#   make book   create .venv, install, execute every chapter, build _build/html
#   make test   the same set-up, then every check (lint, unit, notebooks, strict build, browser)
#   make notebooks  build the book, then write the reader editions in notebooks/ from its execution
#   make chapter NB=08  one chapter's checks, for its author (execution, tests, editions, pages)
#   make lab    JupyterLab on notebooks/ (no npm needed)   make serve   serve _build/html on 127.0.0.1

PYTHON ?= python3
# Where PYTHONDONTWRITEBYTECODE is set (as on the machines that run CI), every Python process
# compiles each module it imports from source: torch's import then takes 4.9 s instead of 2.0,
# in each of the 60-odd kernels, test workers and builds that `make test` starts. Here Python
# keeps what it compiled, in a folder of its own (not beside the sources, not in the venvs).
unexport PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX ?= $(CURDIR)/_build/pycache
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8000
# These machines keep a CPU build of torch on local disk. Elsewhere, get the small CPU-only wheel
# from PyTorch's own index (see README):  make book TORCH_INDEX=<PyTorch CPU wheel index URL>
TORCH_SPEC ?= $(if $(wildcard /opt/wheels/torch-2.13.0*),torch==2.13.0,torch>=2.1)
TORCH_INDEX ?=
MATHJAX_VERSION ?= 3.2.2
MATHJAX := _vendor/static/mathjax/tex-mml-chtml.js
STAMP := $(VENV)/.installed
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
JB_BUILD := $(BIN)/jupyter-book build . --builder html
# The Chinese book (中文版): zh/ is written from chapters/, the catalogues in locales/ and the English
# build's execution, built without executing again, and copied to _build/html/zh/. A second
# argument `keep` keeps zh/_build: Sphinx then rebuilds only the pages whose source changed.
ZH_BUILD = $(BIN)/python -m course_book.i18n.edition $(if $(2),,&& rm -rf zh/_build) \
	&& $(BIN)/jupyter-book build zh --builder html $(1) && rm -rf _build/html/zh \
	&& cp -r zh/_build/html _build/html/zh

.PHONY: book test lab serve install plotly-js lint unit notebooks notebook-check strict-build browser notebooks-and-browser chromium colab-check other-kernels drift-claims drift claims kernels-then-claims lab-check clean catalogues chapter chapter-here chapter-elsewhere

book: install
	rm -rf _build/html _build/jupyter_execute _build/.doctrees
	$(JB_BUILD)
	$(call ZH_BUILD,)
	@echo "The book is in $(CURDIR)/_build/html/index.html — 'make serve' to browse it."

# Each chapter executes three times: the strict build (this machine's CPU kernels), the
# Colab-like run on another CPU's kernels (colab-check: every assertion must hold there too, and
# _build/drift.json records how far each glued value moved), and the JupyterLab check of the
# reader editions. The notebook check regenerates the reader editions from the strict build.
# Every stage keeps both cores busy; what runs side by side is what would leave one idle: the
# three environments and chromium install at once (they wait on disk and network); the strict
# build (one notebook at a time, mostly one core) runs beside the other kernels' run (two
# one-thread processes), then beside the claims tests (two one-thread workers).
test:
	$(MAKE) --no-print-directory -j4 --output-sync=target install chromium \
	  $(COLAB_VENV)/.installed $(LAB_VENV)/.installed
	$(MAKE) --no-print-directory lint unit
	$(MAKE) --no-print-directory -j2 --output-sync=target strict-build kernels-then-claims
	$(MAKE) --no-print-directory drift notebooks-and-browser lab-check
	@echo "make test: all checks passed."
	@sed -n '/^Drift of the glued values/,/^written/p' _build/colab-check.log

kernels-then-claims:
	$(MAKE) --no-print-directory other-kernels
	$(MAKE) --no-print-directory claims

install: $(STAMP) $(MATHJAX) plotly-js

# uv (from PyPI, into .venv) installs all three environments: pip took 150 s to resolve and
# unpack them (torch three times), uv takes about 15 s, linking torch from its cache. Each
# environment is a plain venv with pip in it, for the reader's own `pip install`.
UV_SPEC ?= uv>=0.9,<1
UV := $(BIN)/uv
# uv reads no pip configuration: pass on pip's --find-links (a local wheel directory) if set
PIP_FIND_LINKS ?= $(shell $(PYTHON) -m pip config get global.find-links 2>/dev/null)
UV_INSTALL = $(UV) pip install --quiet $(if $(PIP_FIND_LINKS),--find-links $(PIP_FIND_LINKS)) \
	--python
TORCH_FROM = "$(TORCH_SPEC)" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
$(UV):
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet "$(UV_SPEC)"

$(STAMP): pyproject.toml | $(UV)
	$(UV_INSTALL) $(BIN)/python $(TORCH_FROM)
	$(UV_INSTALL) $(BIN)/python -e ".[book,dev]"
	touch $@

# MathJax is only published on npm: take the bundle and its fonts from `npm pack`, serve them
# from the site itself (html_static_path + mathjax_path in _config.yml).
$(MATHJAX):
	rm -rf _vendor/static/mathjax && mkdir -p _vendor/static/mathjax/output/chtml/fonts
	tmp=$$(mktemp -d) && (cd $$tmp && npm pack --silent mathjax@$(MATHJAX_VERSION) >/dev/null \
	  && tar xzf mathjax-$(MATHJAX_VERSION).tgz) \
	  && cp -r $$tmp/package/es5/output/chtml/fonts/woff-v2 _vendor/static/mathjax/output/chtml/fonts/ \
	  && cp $$tmp/package/es5/tex-mml-chtml.js $@ && rm -rf $$tmp

# plotly.js's cartesian bundle (1.5 MB instead of 4.7 MB) of exactly the version the installed
# plotly draws with; the book extension falls back to the full bundle when it is missing.
plotly-js: $(STAMP)
	@v=$$($(BIN)/python -c "from plotly.offline import get_plotlyjs_version as v; print(v())") && \
	f=_vendor/plotly/plotly-cartesian-$$v.min.js && test -f $$f || { \
	  tmp=$$(mktemp -d) && (cd $$tmp && npm pack --silent plotly.js-cartesian-dist-min@$$v >/dev/null \
	  && tar xzf plotly.js-cartesian-dist-min-$$v.tgz) && mkdir -p _vendor/plotly \
	  && cp $$tmp/package/plotly-cartesian.min.js $$f && rm -rf $$tmp && echo "fetched $$f"; }

lint: install
	$(BIN)/ruff check src tests benchmarks scripts

# The claims tests (seeds 0-2 of every trained model) run once, in colab-check, on another CPU's
# kernels, where the models differ from the chapters' own run (which asserts seed 0 here).
unit: install
	$(BIN)/pytest -q -x -n 2 -m "not notebooks and not browser and not lab and not claims"

# The reader editions (notebooks/, committed: Colab opens files from the repository) are written
# from chapters/ and this build's execution; `make test` fails when they are stale.
notebooks: book
	$(BIN)/python -m course_book.reader .
	$(BIN)/python -m course_book.reader . zh

notebook-check: install
	$(BIN)/pytest -q -x -n 2 -m notebooks

# The strict build saves what each training function returns (course_attention.reuse); the
# JupyterLab check, on the same kernels and one thread, reuses it instead of training again.
# One torch thread here as there: the build shares the cores with the other kernels' run.
TRAINED := $(CURDIR)/_build/trained
SAVE_TRAINED := OMP_NUM_THREADS=1 COURSE_ATTENTION_SAVE_TRAINED=$(TRAINED)
strict-build: install
	rm -rf _build/html _build/jupyter_execute _build/.doctrees _build/trained
	$(SAVE_TRAINED) $(JB_BUILD) -W -n --keep-going
	$(call ZH_BUILD,-W -n --keep-going)

# After an English change: new units join the catalogues, changed ones turn fuzzy (locales/).
catalogues: install
	$(BIN)/python -m course_book.i18n update

# Debian's chromium drives the browser check (CHROMIUM=/path/to/chrome to use another build).
# A second environment with Colab's versions of the libraries the course draws with and the
# oldest numpy pyproject.toml admits; the course is installed on top and may upgrade none of them.
COLAB_VENV := .venv-colab
COLAB_PINS := numpy==1.24.0 plotly==5.24.1 ipywidgets==7.7.1 transformers==4.57.6
$(COLAB_VENV)/.installed: pyproject.toml | $(UV)
	rm -rf $(COLAB_VENV) && $(PYTHON) -m venv $(COLAB_VENV)
	$(UV_INSTALL) $(COLAB_VENV)/bin/python $(TORCH_FROM)
	$(UV_INSTALL) $(COLAB_VENV)/bin/python $(COLAB_PINS) "ipykernel>=6,<7" "nbclient>=0.7" pyyaml
	$(UV_INSTALL) $(COLAB_VENV)/bin/python -e . $(COLAB_PINS)
	touch $@

# Every chapter on another CPU's kernels with Colab's libraries (on one thread, as a one-core
# computer runs it), then the drift of its glued values against the strict build's, then the
# claims about trained models (seeds 0-2) on those kernels.
OTHER_KERNELS = $$($(BIN)/python tests/colab_like.py --env)
colab-check: other-kernels
	$(MAKE) --no-print-directory drift-claims

other-kernels: $(COLAB_VENV)/.installed install
	OMP_NUM_THREADS=1 $(COLAB_VENV)/bin/python tests/colab_like.py $(NB)

drift-claims: drift claims
drift: install
	$(BIN)/python tests/drift.py $(NB) | tee _build/colab-check.log
claims: install  # one thread per xdist worker: two workers share two cores
	env $(OTHER_KERNELS) OMP_NUM_THREADS=1 $(BIN)/pytest -q -n 2 --maxschedchunk 1 -m claims --durations=8 $(if $(NB),--chapter $(NB)) \
	  || [ $$? = 5 ]  # 5: the chapter trains no model, so it has no claims test

# A chapter author's loop, two halves at once (one per core), then the drift of its glued values:
# here, NB's execution by the book's incremental build (it re-reads, so executes, only the chapter
# touched here), both sites, its reader editions, its unit, edition and page checks (English and
# Chinese); elsewhere, NB on another CPU's kernels with Colab's libraries and its claims tests.
chapter: install chromium $(COLAB_VENV)/.installed
	@test -n "$(NB)" || { echo "usage: make chapter NB=08 (a chapter's file-name prefix)"; exit 2; }
	$(MAKE) --no-print-directory -j2 --output-sync=target chapter-here chapter-elsewhere NB=$(NB)
	$(BIN)/python tests/drift.py $(NB)

chapter-here:
	touch chapters/$(NB)*.ipynb
	$(SAVE_TRAINED) $(JB_BUILD) -W -n --keep-going
	$(call ZH_BUILD,-W -n --keep-going,keep)
	$(BIN)/python -m course_book.reader . >/dev/null
	$(BIN)/python -m course_book.reader . zh >/dev/null
	$(BIN)/pytest -q -x -n 2 --dist load --chapter $(NB) -m "not lab and not claims"

chapter-elsewhere:
	OMP_NUM_THREADS=1 $(COLAB_VENV)/bin/python tests/colab_like.py $(NB)
	env $(OTHER_KERNELS) OMP_NUM_THREADS=1 $(BIN)/pytest -q -n 2 -m claims --chapter $(NB) \
	  || [ $$? = 5 ]

# Debian's CJK fonts let screenshots of the Chinese site show glyphs (the site ships no web font).
chromium:
	@test -x "$${CHROMIUM:-/usr/bin/chromium}" || { $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium >/dev/null; }
	@dpkg -s fonts-noto-cjk >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq fonts-noto-cjk >/dev/null; }

# axe-core (WCAG 2 A/AA rules) from npm, injected into every page by the accessibility check.
AXE_VERSION ?= 4.14.1
AXE := _vendor/axe.min.js
$(AXE):
	mkdir -p _vendor && tmp=$$(mktemp -d) && (cd $$tmp && npm pack --silent \
	  axe-core@$(AXE_VERSION) >/dev/null && tar xzf axe-core-$(AXE_VERSION).tgz) \
	  && cp $$tmp/package/axe.min.js $@ && rm -rf $$tmp

browser: install chromium $(AXE)
	$(BIN)/pytest -q -x -n 2 --dist load --maxschedchunk 1 -m browser

# make test: the notebook and browser checks in one pytest run (one start of its workers)
notebooks-and-browser: install chromium $(AXE)
	$(BIN)/pytest -q -x -n 2 --dist load --maxschedchunk 1 -m "notebooks or browser" --durations=12

# JupyterLab lives in its own environment: its server's dependencies slow the book's execution.
LAB_VENV := .venv-lab
$(LAB_VENV)/.installed: pyproject.toml | $(UV)
	rm -rf $(LAB_VENV) && $(PYTHON) -m venv $(LAB_VENV)
	$(UV_INSTALL) $(LAB_VENV)/bin/python $(TORCH_FROM)
	$(UV_INSTALL) $(LAB_VENV)/bin/python -e ".[lab]"
	touch $@

lab: $(LAB_VENV)/.installed
	$(LAB_VENV)/bin/jupyter lab notebooks/

# Every reader notebook opened and run in a real JupyterLab, checked in headless Chromium; its
# kernels reuse the strict build's trainings (_build/trained, see strict-build).
# Three workers on two cores: a notebook's run in JupyterLab waits on the page and the kernel
# in turn (one worker leaves a core idle 40 % of the time; three: 3 %, and the stage 10 % sooner).
lab-check: install chromium $(LAB_VENV)/.installed
	$(BIN)/pytest -q -x -n 3 --dist load --maxschedchunk 1 -m lab --durations=13

serve:
	@echo "Serving _build/html on http://127.0.0.1:$(PORT)/"
	$(BIN)/python -m http.server $(PORT) --bind 127.0.0.1 --directory _build/html

clean:
	rm -rf _build _vendor zh .venv-colab .venv-lab .pytest_cache .hypothesis .ruff_cache
