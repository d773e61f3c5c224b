# The course's two commands: `make book` and `make test` (see README.md).
# Both create .venv on first use and install requirements.txt into it.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed
# Recipes use the venv's tools first (nbgrader needs `alembic` on PATH, for instance).
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

LINT_PATHS := chipsim grader tests benchmarks grading/make_demo_submissions.py nbgrader_config.py \
  locales book/_ext/translation.py book/_ext/notebook_translation.py book/_ext/chapter.py \
  book/_ext/cjk_font.py book/_ext/notebook_markdown.py book/_ext/ipynb_download.py
# JupyterLab setting (kept inside the venv): double-clicking a chapter opens it as a notebook.
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.json
# Kernels started from the venv read it (.venv/etc/ipython/): no TCP warning per chapter.
KERNEL_CONFIG_SRC := config/ipython_kernel_config.py

# ME travels through the environment, never spliced into the shell: any name is safe here.
grade-mine: export GRADE_MINE_ME = $(ME)

.PHONY: help setup book translations test lint lab chapter exercises grade grade-mine feedback leaderboard demo-submissions clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

# Re-install only when requirements.txt or pyproject.toml changed (the stamp is newer otherwise).
# The last step builds matplotlib's font cache, so its one-time notice never lands in a
# chapter's stderr (which the strict build treats as a warning).
$(STAMP): requirements.txt pyproject.toml $(KERNEL_CONFIG_SRC) | $(VENV)/bin/python
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	install -D -m 644 $(KERNEL_CONFIG_SRC) $(VENV)/etc/ipython/ipython_kernel_config.py
	mkdir -p $(dir $(LAB_SETTINGS))
	printf '%s\n' '{"@jupyterlab/docmanager-extension:plugin":' \
	  '  {"defaultViewers": {"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"}}}' \
	  > $(LAB_SETTINGS)
	$(VENV)/bin/python -c "import matplotlib.pyplot"
	touch $@

setup: $(STAMP)  ## create .venv and install everything (done by every other target)

# Every edition of locales/editions.yml, strictly (-W -n --keep-going, raise_on_error): English
# in _build/html, 中文 in _build/html/zh. One edition only: make book EDITIONS=zh_CN
EDITIONS ?=
book: $(STAMP)  ## build the book strictly: English in _build/html, 中文 in _build/html/zh
	python locales/editions.py build $(if $(EDITIONS),--only $(EDITIONS))
	@echo "Open _build/html/index.html (English) or _build/html/zh/index.html (中文)"

# Translators: refresh the catalogues after the English changed; PAGES=book/x starts a new one.
PAGES ?=
translations: $(STAMP)  ## update the translation catalogues (locales/, chipsim/locales/) from the English
	python locales/editions.py update $(PAGES)

lint: $(STAMP)  ## ruff check + ruff format --check + the layer contracts (lint-imports)
	ruff check $(LINT_PATHS)
	ruff format --check $(LINT_PATHS)
	lint-imports --no-cache

test: lint  ## lint, then the whole pytest suite (includes the book build and browser tests)
	pytest

lab: $(STAMP)  ## JupyterLab at the course root: chapters open as notebooks, nbgrader lists assignments
	CHIPSIM_LOCAL_EXCHANGE=$(CURDIR)/gradebook/exchange \
	  jupyter lab --notebook-dir=$(CURDIR) $(if $(filter 0,$(shell id -u)),--allow-root)

# One chapter, rendered as in the book (the book's config; only this chapter's cells run):
# make chapter CH=book/static_vs_dynamic.md  -> _build/chapter/_build/html/book/<page>.html
CH ?=
# The 中文 page: make chapter CH=book/static_vs_dynamic.md EDITION=zh_CN -> _build/chapter-zh_CN/...
EDITION ?=
chapter: $(STAMP)  ## build one chapter as the book renders it: make chapter CH=book/static_vs_dynamic.md [EDITION=zh_CN]
	@test -n "$(CH)" || { echo "usage: make chapter CH=book/<file>.md [EDITION=zh_CN]"; exit 2; }
	python book/_ext/chapter.py $(CH) $(if $(EDITION),--edition $(EDITION))

exercises: $(STAMP)  ## regenerate the release from solutions/ and publish it to exercises/ (never over your edits)
	python -m grader.cli release

# Instructor: autograde gradebook/submitted in parallel (the demo learners when it is empty),
# each notebook in a sandboxed kernel of its own; only changed submissions are regraded.
# Then gradebook/grades.csv, score_distribution.png and flags.csv (see README, "Instructors").
# Options: make grade GRADE_FLAGS="--workers 4 --force --timeout 30 --unsafe-no-sandbox"
# A large class: GRADEBOOK_URL=postgresql://... selects the gradebook database, and
# make grade SHARD=i/N (i = 0 .. N-1) grades shard i of N, one per machine (README).
GRADE_FLAGS ?=
SHARD ?=
grade: $(STAMP)  ## autograde new and changed submissions in the sandbox; gradebook/grades.csv
	python -m grader.cli grade $(if $(SHARD),--shard $(SHARD)) $(GRADE_FLAGS)

# Learners on their own: grade the notebooks you worked on (my-work/ or exercises/; the
# command says which) as learner $(ME), and write your feedback pages. Your notebooks are
# read, never written. They are yours and trusted: a machine that cannot sandbox kernels
# grades them unsandboxed (and says so).
ME ?= me
grade-mine: $(STAMP)  ## grade your own notebooks (my-work/ or exercises/); feedback in gradebook/feedback/<you>/
	python -m grader.cli mine --me "$$GRADE_MINE_ME" $(GRADE_FLAGS)

feedback: $(STAMP)  ## HTML feedback (with pictures) per student under gradebook/feedback/
	python -m grader.cli feedback

# The open challenges ranked (gradebook/leaderboard.html + .csv), from the grader's own
# numbers in the autograded notebooks. Pseudonyms: make leaderboard LEADERBOARD_FLAGS=--pseudonyms
LEADERBOARD_FLAGS ?=
leaderboard: $(STAMP)  ## rank the class on the open challenges: gradebook/leaderboard.html (+ .csv)
	python -m grader.feedback.leaderboard $(LEADERBOARD_FLAGS)

demo-submissions: $(STAMP)  ## regenerate grading/demo_submissions from exercises/ + solutions/
	python grading/make_demo_submissions.py

clean:  ## remove build outputs (keeps .venv)
	rm -rf _build
