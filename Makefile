# Two commands for a newcomer: `make demo` and `make test`. Both set themselves up:
# a .venv from requirements.txt and the Debian packages below (apt-get, only when missing).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed
APT_PACKAGES := ffmpeg espeak-ng flite pocketsphinx-testdata alsa-utils chromium
DEMO_RELEASE := build/demo_release
DATASET := speech-drame
LITE_SCORER := artifacts/lite_scorer
DEMO_ROLEBENCH := build/demo_rolebench
DEMO_NOTE := Synthetic demo corpus built offline by make demo (real LibriVox, Debian and official-sample speech plus offline TTS). Its labels are SIMULATED annotators derived from construction parameters: synthetic proxy labels, not human ratings.

export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
export NUMBA_CACHE_DIR := $(CURDIR)/.cache/numba
export SPEECH_DRAME_CACHE := $(CURDIR)/.cache/features
export GRADIO_ANALYTICS_ENABLED := False

.PHONY: setup apt demo demo-data demo-scorer demo-rolebench test lint format clean

setup: $(INSTALLED) apt

$(INSTALLED): requirements.txt constraints.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt -c constraints.txt
	# resemblyzer declares two stale dependencies (typing backport, webrtcvad); webrtcvad-wheels replaces the latter
	$(PY) -m pip install -q --no-deps resemblyzer==0.1.4
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	touch $@

apt:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:" $$missing; \
	  sudo=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$sudo apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# The demo release (official raw format) is rebuilt only when its generator changes.
$(DEMO_RELEASE)/DEMO_MANIFEST.json: $(INSTALLED) $(wildcard speech_drame/demo/*.py) | apt
	$(PY) dataset_scripts/make_demo_release.py --out $(DEMO_RELEASE)

$(DATASET)/build_report.json: $(DEMO_RELEASE)/DEMO_MANIFEST.json speech_drame/hub_dataset.py \
		speech_drame/dataset_features.py speech_drame/dataset_card.py speech_drame/schema.py speech_drame/release.py
	$(PY) dataset_scripts/build_dataset.py --source $(DEMO_RELEASE) --out $(DATASET) \
		--license other --source-note '$(DEMO_NOTE)'

# The default evaluator, trained on the demo train splits (features cached in .cache/features).
$(LITE_SCORER)/config.json: $(DATASET)/build_report.json $(wildcard speech_drame/scorers/*.py) \
		$(wildcard speech_drame/features/*.py)
	$(VENV)/bin/speech-drame train-lite --dataset $(DATASET) --out $(LITE_SCORER)

$(DEMO_ROLEBENCH)/run/leaderboard.md: $(LITE_SCORER)/config.json $(wildcard speech_drame/rolebench*.py)
	$(PY) dataset_scripts/make_demo_rolebench.py --out $(DEMO_ROLEBENCH) --scorer $(LITE_SCORER)

demo-data: $(DATASET)/build_report.json
demo-scorer: $(LITE_SCORER)/config.json
demo-rolebench: $(DEMO_ROLEBENCH)/run/leaderboard.md

demo: demo-data demo-scorer demo-rolebench
	$(VENV)/bin/speech-drame summary --dataset $(DATASET)
	@echo; echo "LiteScorer: $(LITE_SCORER) (evaluation: $(LITE_SCORER)/metrics.json)"
	@echo "RoleBench leaderboard: $(DEMO_ROLEBENCH)/run/leaderboard.md"; cat $(DEMO_ROLEBENCH)/run/leaderboard.md

test: demo-data demo-scorer
	$(PY) -m ruff check .
	$(PY) -m pytest

lint: $(INSTALLED)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

format: $(INSTALLED)
	$(PY) -m ruff format .

clean:
	rm -rf build $(DATASET) artifacts .cache
