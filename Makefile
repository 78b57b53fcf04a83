# The two commands of the README: `make run` (the main job) and `make test`.
# Both set up .venv on first use (scripts/bootstrap.sh finds a Python >= 3.12 by itself).
VENV := .venv
BIN := $(VENV)/bin
OUT ?= out
# ../shared/realdocs beside the checkout (a worktree under wt/<name> finds it one folder further up)
REALDOCS ?= $(firstword $(wildcard ../shared/realdocs ../../shared/realdocs))

.PHONY: setup run qa test test-slow docs bench fuzz clean

setup:
	@bash scripts/bootstrap.sh

# The main job: score both QA modes and every extraction document set against the committed
# baselines (JSON reports under out/; --require-baseline: a missing entry fails instead of being
# recorded in a clone CI never commits), then run every notebook with papermill and render the
# HTML reports into out/. Where ../shared/realdocs is present, the engine ingests it into
# $(OUT)/realdocs and its answers are gated against data/golden/realdocs_answers_gold.json on
# both routes (docs/answers.md). Every step runs even after a failure, so all reports exist; the
# job exits non-zero on any regression.
run: setup
	@mkdir -p $(OUT)
	@status=0; \
	for mode in tool agent; do \
	  $(BIN)/ragspine-eval qa --mode $$mode --require-baseline --report $(OUT)/qa_$$mode.json \
	    --junit $(OUT)/qa_$$mode.xml --summary-md $(OUT)/qa_$$mode.md || status=1; \
	done; \
	$(BIN)/ragspine-eval extraction --docs all --require-baseline \
	  --report $(OUT)/extraction_report.json \
	  --junit $(OUT)/extraction.xml --summary-md $(OUT)/extraction.md || status=1; \
	if [ -n "$(REALDOCS)" ]; then \
	  rm -rf $(OUT)/realdocs; \
	  $(BIN)/ragspine-eval kb build $(REALDOCS) --out $(OUT)/realdocs > $(OUT)/realdocs_build.txt \
	    && $(BIN)/ragspine-eval answers --kb $(OUT)/realdocs \
	      --golden data/golden/realdocs_answers_gold.json --require-baseline \
	      --report $(OUT)/answers_realdocs.json --junit $(OUT)/answers_realdocs.xml \
	      --summary-md $(OUT)/answers_realdocs.md || status=1; \
	else echo "../shared/realdocs absent: the realdocs answer gate is skipped"; fi; \
	$(BIN)/ragspine-eval notebooks --out $(OUT) || status=1; \
	exit $$status

# `make test` is what CI runs (about twelve minutes on 2 cores); the suites that take minutes each
# (three real JupyterLab sessions, the quick benchmark, compare-main's passing run, the answers
# notebook's failing run and browser check, the answer run killed and resumed and on every
# executor) are `make test-slow` (about five more).
test: setup
	@$(BIN)/python -m pytest -m "not jupyterlab and not slow"

test-slow: setup
	@$(BIN)/python -m pytest -m "jupyterlab or slow"

# The reference in docs/ built into a site under $(OUT)/site (ignored, never committed); --strict:
# a broken link or anchor, or a page missing from mkdocs.yml's navigation, fails it (not --quiet:
# it hides the warnings that --strict counts, and the build passes). .ci/run runs it.
docs: setup
	@$(BIN)/mkdocs build --strict --site-dir $(OUT)/site

# The benchmarks (issues 7, 17, 21, 23, 44): about 35 minutes on 2 cores (answers about 16 of
# them); not part of `run` or CI. Prints a table with each target met or missed and writes
# out/bench/bench.json.
bench: setup
	@$(BIN)/python -m benchmarks --out $(OUT)/bench

# The readers fuzzed with 10,000 generated inputs each (issue 14): about 15 minutes on 2 cores;
# `make test` runs the same properties with 40 inputs each. Then issue 45's readers (question
# files, engine configurations, SQLite workspaces) with 3,000 each; `make test` runs 150. Then
# issue 54's hostile gold files and cassettes through the CLI, 2,000 each; `make test` runs 40.
fuzz: setup
	@RAGSPINE_EVAL_FUZZ_EXAMPLES=10000 $(BIN)/python -m pytest -q tests/faults/test_fuzz_readers.py
	@RAGSPINE_EVAL_FUZZ_EXAMPLES=3000 $(BIN)/python -m pytest -q tests/faults/test_fuzz_workspace_inputs.py
	@RAGSPINE_EVAL_FUZZ_EXAMPLES=2000 $(BIN)/python -m pytest -q tests/golden/test_hostile_gold.py \
	  tests/models/test_hostile_cassettes.py

clean:
	rm -rf $(OUT) .pytest_cache
