#!/usr/bin/env bash
# The CI steps, one script for every CI that runs this project: .ci/run (this project's own CI),
# .github/workflows/eval.yml and .gitlab-ci.yml all call it, so that they cannot drift apart.
#
#   bash scripts/ci.sh STEP [STEP ...]     the steps in order; the first that fails stops it
#
#   setup              Debian's chromium and fonts-noto-cjk when missing (the browser checks of
#                      the HTML reports), then `make setup` (.venv, the project, the kernel)
#   test               `make test`, the README's test command (JUnit of the tests: out/pytest.xml)
#   docs               `make docs` (mkdocs build --strict)
#   run                `make run`: the gated main job; JSON, JUnit, Markdown and HTML in out/
#   summary            every out/*.md appended to $GITHUB_STEP_SUMMARY, or printed to the job log
#   compare-main DIR   this run's QA reports (out/qa_MODE.json) against main's (DIR/qa_MODE.json):
#                      notebooks/compare.ipynb with papermill, rendered to out/compare_main_MODE.html;
#                      extraction with `ragspine-eval diff`; exits 1 when a case went from pass
#                      to fail, 2 when a report cannot be read or main has one this run lacks
#
# .ci/run runs `setup test docs run`. OUT (default out) is where `make run` writes, as in the
# Makefile. Nothing here needs the network beyond the package registries.
set -euo pipefail
cd "$(dirname "$0")/.."

export OUT="${OUT:-out}"
BIN=.venv/bin
MODES=(tool agent)  # the QA modes `make run` reports on (engines.EVAL_MODES)

step_setup() {
    # The HTML reports are checked in a real headless Chromium (Debian's package), offline, with a
    # CJK font so that the golden set's Chinese draws as glyphs, not boxes (a browser test checks).
    if ! command -v chromium >/dev/null 2>&1 || ! fc-list 2>/dev/null | grep -qi "Noto Sans CJK"; then
        if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
            echo "Installing Debian's chromium and fonts-noto-cjk for the HTML report checks"
            export DEBIAN_FRONTEND=noninteractive
            apt-get install -y -qq chromium fonts-noto-cjk >/dev/null 2>&1 \
                || { apt-get update -qq && apt-get install -y -qq chromium fonts-noto-cjk >/dev/null; } \
                || echo "warning: chromium or fonts-noto-cjk could not be installed; the browser checks may fail or be skipped"
        else
            echo "warning: no chromium or no CJK font, and no way to install them"
        fi
    fi
    make setup
}

step_test() {
    # the tests' own JUnit file, beside the reports, for the CI's test report (an absolute path:
    # a test that starts pytest in another folder would otherwise write one there)
    mkdir -p "$OUT"
    local junit
    junit="$(cd "$OUT" && pwd)/pytest.xml"
    PYTEST_ADDOPTS="${PYTEST_ADDOPTS:-} --junitxml=$junit" make test
}

step_docs() {
    make docs
}

step_run() {
    make run
}

# A Markdown file where the reader of the run sees it: the job summary on GitHub Actions, a
# section of the job log on GitLab (which folds it), plainly printed anywhere else.
publish_md() {
    local file=$1 name
    if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
        { cat "$file"; echo; } >>"$GITHUB_STEP_SUMMARY"
        echo "$file appended to the job summary"
    elif [ -n "${GITLAB_CI:-}" ]; then
        name=$(basename "$file" .md | tr -c 'a-zA-Z0-9_\n' _)
        printf '\e[0Ksection_start:%s:md_%s[collapsed=false]\r\e[0K%s\n' "$(date +%s)" "$name" "$file"
        cat "$file"
        printf '\e[0Ksection_end:%s:md_%s\r\e[0K\n' "$(date +%s)" "$name"
    else
        echo "---- $file"
        cat "$file"
    fi
}

step_summary() {
    local found=0 file
    for file in "$OUT"/*.md; do
        [ -f "$file" ] || continue
        found=1
        publish_md "$file"
    done
    [ "$found" = 1 ] || echo "no Markdown summary under $OUT/ (did \`make run\` run?)"
}

step_compare_main() {
    local main=${1:-} status=0 mode before after notebook log md code dcode rendered
    if [ -z "$main" ]; then
        echo "compare-main needs the folder that holds main's reports: bash scripts/ci.sh compare-main DIR" >&2
        return 2
    fi
    if ! compgen -G "$main/qa_*.json" >/dev/null; then
        echo "notice: no QA report of main under $main/ (main has no successful run yet, or its"
        echo "artifact has expired): nothing to compare with; \`make run\`'s baseline gate still applies"
        return 0
    fi
    make setup
    md="$OUT/compare_main.md"
    mkdir -p "$OUT"
    echo "## This branch against main" >"$md"
    for mode in "${MODES[@]}"; do
        before="$main/qa_$mode.json"
        after="$OUT/qa_$mode.json"
        [ -f "$before" ] || { echo "notice: main has no $before; $mode mode not compared"; continue; }
        if [ ! -f "$after" ]; then
            echo "error: $after is missing: this run left no $mode report to compare with main's (did \`make run\` run?)" >&2
            status=2
            continue
        fi
        notebook="$OUT/compare_main_$mode.ipynb"
        log="$OUT/compare_main_$mode.log"
        echo "compare $mode: $before (main) -> $after (this run): $OUT/compare_main_$mode.html"
        # the PR gate: the notebook's last cell raises on a pass -> fail flip, papermill exits 1;
        # its traceback goes to the log file, the error's own lines to the job log
        code=0
        "$BIN/papermill" --no-progress-bar notebooks/compare.ipynb "$notebook" \
            -p before "$before" -p after "$after" -p fail_on_flips True >"$log" 2>&1 || code=$?
        if [ "$code" != 0 ]; then
            echo "papermill exited $code (all of its output: $log):"
            # from the last error line on: the gate's message, or what stopped the notebook
            awk '/^[A-Za-z_.]*(Error|Exception): /{n=NR} {l[NR]=$0} END{if(!n) exit 1; for(i=n;i<=NR;i++) print l[i]}' \
                "$log" || tail -20 "$log"
        fi
        # rendered whether the gate passed or not: the reviewer reads why
        rendered=0
        if [ -f "$notebook" ]; then
            "$BIN/ragspine-eval" notebooks --render "$notebook" || rendered=$?
        fi
        { echo; echo "### QA, $mode mode: \`compare_main_$mode.html\`"; echo
          if [ "$code" = 0 ]; then echo "PASS: no case went from pass to fail"
          else echo "**FAIL**: see \`compare_main_$mode.html\` (the artifact compare-with-main, or the exposed compare with main)"; fi
          echo; echo '```'; } >>"$md"
        # the same pairing in the log and the summary (outputs.diff, which compare.py reads)
        # (its exit 2 tells a report that cannot be read from a flip, which papermill cannot)
        dcode=0
        "$BIN/ragspine-eval" diff "$before" "$after" | tee -a "$md" || dcode=$?
        echo '```' >>"$md"
        if [ "$code" != 0 ] && [ "$status" = 0 ]; then
            status=$([ "$dcode" = 2 ] && echo 2 || echo 1)
        fi
        [ "$rendered" = 0 ] || [ "$status" != 0 ] || status=$rendered
    done
    if [ -f "$main/extraction_report.json" ] && [ -f "$OUT/extraction_report.json" ]; then
        { echo; echo "### Extraction"; echo; echo '```'; } >>"$md"
        code=0
        "$BIN/ragspine-eval" diff "$main/extraction_report.json" "$OUT/extraction_report.json" \
            | tee -a "$md" || code=$?
        echo '```' >>"$md"
        [ "$code" = 0 ] || [ "$status" != 0 ] || status=$code
    fi
    publish_md "$md"
    if [ "$status" = 0 ]; then
        echo "PASS: no case went from pass to fail against main"
    else
        echo "FAIL: against main (see $OUT/compare_main_*.html and the lines above)" >&2
    fi
    return "$status"
}

if [ $# = 0 ]; then
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
    exit 2
fi
while [ $# -gt 0 ]; do
    case $1 in
        setup | test | docs | run | summary)
            echo "== ci: $1"
            "step_$1"
            shift ;;
        compare-main)
            echo "== ci: compare-main ${2:-}"
            step_compare_main "${2:-}"
            shift $(($# >= 2 ? 2 : 1)) ;;
        *)
            echo "scripts/ci.sh: unknown step '$1'; the steps: setup test docs run summary compare-main DIR" >&2
            exit 2 ;;
    esac
done
