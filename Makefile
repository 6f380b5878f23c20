# Two commands for a newcomer: `make demo` and `make test`. Both set themselves up:
# a .venv from requirements.txt and the Debian packages below (apt-get, only when missing).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed
APT_PACKAGES := ffmpeg espeak-ng flite pocketsphinx-testdata alsa-utils
DEMO_RELEASE := build/demo_release
DATASET := speech-drame
DEMO_NOTE := Synthetic demo corpus built offline by `make demo` (real LibriVox/Debian/official-sample speech plus offline TTS). Its labels are SIMULATED annotators derived from construction parameters: synthetic proxy labels, not human ratings.

export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
export NUMBA_CACHE_DIR := $(CURDIR)/.cache/numba

.PHONY: setup apt demo demo-data test lint format bench clean

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
		--license other --source-note "$(DEMO_NOTE)"

demo-data: $(DATASET)/build_report.json

demo: demo-data
	$(VENV)/bin/speech-drame summary --dataset $(DATASET)

test: demo-data
	$(PY) -m ruff check .
	$(PY) -m pytest

lint: $(INSTALLED)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

format: $(INSTALLED)
	$(PY) -m ruff format .

bench: $(INSTALLED) | apt
	$(PY) benchmarks/bench_build.py

clean:
	rm -rf build $(DATASET) .cache
