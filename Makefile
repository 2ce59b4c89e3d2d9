# Two commands do everything on a fresh machine (see README.md):
#   make main   set up, synthesize every organisation, replay the AWS tutorial on the emulator
#   make test   set up, lint, type-check and run the test suite
VENV := .venv
PY := $(VENV)/bin/python
LOCK := requirements-dev.lock
export PATH := $(CURDIR)/$(VENV)/bin:$(CURDIR)/node_modules/.bin:$(PATH)
export CDK_DISABLE_CLI_TELEMETRY := true

.PHONY: setup core main synth demo serve test check lint docs bench lock

setup: $(VENV)/.installed node_modules/.installed core

# Only locked, hashed packages: every one is in $(LOCK) with its hashes (pip refuses anything else),
# then the project itself, editable, built by the locked setuptools without fetching a build env.
$(VENV)/.installed: $(LOCK) pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --require-hashes --no-deps -r $(LOCK)
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) -m pip check
	touch $@

# Regenerate the lock after editing requirements.txt or requirements-dev.txt (needs PyPI). Its own
# tools are locked too: pip-compile runs from the venv `make setup` installed from the hashed lock
# (pip-tools pinned in requirements-dev.txt, its dependencies with it), so nothing unpinned or
# unhashed is installed to make the lock. Versions already locked are kept (no --upgrade).
lock: $(VENV)/.installed
	$(VENV)/bin/pip-compile --quiet --generate-hashes --allow-unsafe --strip-extras \
		--no-emit-index-url --no-emit-find-links --output-file=$(LOCK) requirements-dev.txt

# The optional mypyc build of the scheduler core (build/compiled-core/, used only while it matches
# the sources; QUOTA_COMPILE=0 skips it). Rebuilt when the sources changed; never fails set-up.
core: $(VENV)/.installed
	$(VENV)/bin/quota build-core

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

main: synth demo

synth: setup
	cdk synth --quiet

demo: setup
	quota demo

serve: setup
	quota local serve

# Benchmarks print ratios measured side by side in one run; figures are in docs/.
bench: setup
	$(PY) benchmarks/bench_synth.py --repeat 9
	$(PY) benchmarks/bench_core.py
	$(PY) benchmarks/bench_overload.py
	$(PY) benchmarks/bench_compiled.py
	$(PY) benchmarks/bench_server.py
	$(PY) benchmarks/bench_tracking.py
	$(PY) benchmarks/bench_simulator.py
	$(PY) benchmarks/bench_command.py --optimize
	$(PY) benchmarks/bench_forecast.py
	$(PY) benchmarks/bench_year.py
	$(PY) benchmarks/bench_optimize_dask.py
	$(PY) benchmarks/bench_reclaim.py

lint: setup
	ruff check .
	ruff format --check .
	mypy

# The inner loop, a few minutes: lint, types and the fast tests (model, files, scheduler core,
# advisor, constructs and the import arrows; none marked slow). The emulator over HTTP, the
# runtime, the IAM simulations, the SDK, the installed wheel and the doc blocks run in `make test`.
FAST_TESTS := tests/unit tests/scheduling tests/advisor tests/constructs tests/forecast tests/test_architecture.py
# One worker per core, each test file on one worker (a file's fixtures are built once). Every
# emulator a test starts listens on a free port, the doc blocks' too: 8771 may be held.
PARALLEL := -n auto --dist loadfile

check: lint
	pytest $(PARALLEL) -m "not slow" $(FAST_TESTS)

# The documentation site into build/site/ (mkdocs.yml). Strict: a broken link or anchor, or a page
# missing from the navigation, fails the build. (NO_MKDOCS_2_WARNING: mkdocs-material's notice of
# its end of life in May 2027, printed on every build otherwise; docs/index.md says what then.)
docs: setup
	NO_MKDOCS_2_WARNING=1 mkdocs build --strict --quiet

# Everything: the site, then every test; the 25 slowest are listed at the end (in CI's output).
test: lint docs
	pytest $(PARALLEL) --durations=25
