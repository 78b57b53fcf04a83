"""The CI files (issue 46): .github/workflows/eval.yml and .gitlab-ci.yml pass a real validator of
their format, offline, and fail it when broken; .ci/run and both files run the one shared script,
scripts/ci.sh, whose every command exists (make targets, notebooks and their papermill
parameters, ragspine-eval subcommands and flags); the compare-against-main step, on two small
reports where one case went from pass to fail, exits 1 and leaves the compare HTML."""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml
from builders import stored_qa_run

from ragspine_eval import paths
from ragspine_eval.cli.app import SUBCOMMANDS, build_parser

ROOT = paths.PROJECT_ROOT
WORKFLOW = ROOT / ".github" / "workflows" / "eval.yml"
GITLAB = ROOT / ".gitlab-ci.yml"
SCRIPT = ROOT / "scripts" / "ci.sh"
CI_RUN = ROOT / ".ci" / "run"
CHECK_JSONSCHEMA = Path(sys.executable).parent / "check-jsonschema"
CORE_STEPS = ["setup", "test", "docs", "run"]  # what .ci/run runs, in order
WRONG = "num-001"  # the case the second run answers wrong (engine_doubles)

# each file, with the validator's arguments: the vendored schemas of check-jsonschema
LINTS = {
    "github": (WORKFLOW, [["--builtin-schema", "vendor.github-workflows"],
                          # every job has a timeout, so a hung job cannot burn six hours
                          ["--builtin-schema", "custom.github-workflows-require-timeout"]]),
    "gitlab": (GITLAB, [["--builtin-schema", "vendor.gitlab-ci", "--data-transform", "gitlab-ci"]]),
}


def lint(path: Path, args: list[str]) -> subprocess.CompletedProcess:
    # a proxy that answers nothing: a validator that reached for the network would fail here
    dead = "http://127.0.0.1:9"
    env = {**os.environ, "HTTP_PROXY": dead, "HTTPS_PROXY": dead, "http_proxy": dead,
           "https_proxy": dead, "NO_PROXY": "", "no_proxy": ""}
    return subprocess.run([str(CHECK_JSONSCHEMA), *args, str(path)], capture_output=True,
                          text=True, timeout=120, env=env)


# --- a real validator, offline, that fails a broken file ---------------------------------------


@pytest.mark.parametrize("kind", sorted(LINTS))
def test_each_ci_file_passes_the_validator_of_its_format_offline(kind):
    path, runs = LINTS[kind]
    for args in runs:
        done = lint(path, args)
        assert done.returncode == 0, f"{path.name} ({' '.join(args)}):\n{done.stdout}{done.stderr}"
        assert "validation done" in done.stdout


def test_the_dead_proxy_stops_a_validator_that_would_download_its_schema():
    """The offline check above can fail: a schema fetched from the web is refused here."""
    done = lint(WORKFLOW, ["--no-cache", "--schemafile",
                           "https://json.schemastore.org/github-workflow.json"])
    assert done.returncode != 0 and "ProxyError" in done.stdout + done.stderr


BREAKS = [  # (file, a line of it, the broken line, what the validator says it is about)
    ("github", "    runs-on: ubuntu-latest\n", "    runs_on: ubuntu-latest\n", "$.jobs.eval"),
    ("github", "    timeout-minutes: 60\n", "", "$.jobs.eval"),
    ("gitlab", "    when: always\n    # how long", "    when: sometimes\n    # how long",
     "$.eval.artifacts.when"),
    ("gitlab", "  script:\n    - bash scripts/ci.sh setup",
     "  scripts:\n    - bash scripts/ci.sh setup", "$.eval"),
]


@pytest.mark.parametrize(("kind", "line", "broken", "where"), BREAKS)
def test_a_broken_ci_file_fails_the_validator(tmp_path, kind, line, broken, where):
    path, runs = LINTS[kind]
    text = path.read_text(encoding="utf-8")
    assert line in text, f"{line!r} is no longer in {path.name}: update this test"
    copy = tmp_path / path.name
    copy.write_text(text.replace(line, broken, 1), encoding="utf-8")  # the first job's
    failed = [done for done in (lint(copy, args) for args in runs) if done.returncode != 0]
    assert failed, f"{path.name} with {broken!r} passed its validator"
    assert where in failed[0].stdout


# --- every command the CI files run exists -----------------------------------------------------


def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def gitlab() -> dict:
    return yaml.safe_load(GITLAB.read_text(encoding="utf-8"))


def commands() -> dict[str, list[str]]:
    """Every shell line each CI file runs, in order, by where it is."""
    found: dict[str, list[str]] = {}
    for name, job in workflow()["jobs"].items():
        found[f"github {name}"] = [s["run"] for s in job["steps"] if "run" in s]
    for name, job in gitlab().items():
        if isinstance(job, dict) and "script" in job:
            found[f"gitlab {name}"] = [*job.get("script", []), *job.get("after_script", [])]
    return found


def ci_steps(lines: list[str]) -> list[str]:
    """The steps of scripts/ci.sh the lines call, in order (compare-main's folder left out)."""
    steps = []
    for line in lines:
        for call in re.findall(r"bash scripts/ci\.sh ([^\n;&|]+)", line):
            words = shlex.split(call)
            steps += [w for i, w in enumerate(words) if i == 0 or words[i - 1] != "compare-main"]
    return steps


def script_steps() -> set[str]:
    text = SCRIPT.read_text(encoding="utf-8")
    defined = {m.replace("_", "-") for m in re.findall(r"^step_([a-z_]+)\(\)", text, re.M)}
    dispatched = set(re.findall(r"^ {8}([a-z|\- ]+)\)$", text, re.M))
    dispatched = {s.strip() for group in dispatched for s in group.split("|")}
    assert dispatched == defined, "scripts/ci.sh: a step defined but not dispatched, or the reverse"
    return defined


def test_ci_run_and_both_ci_files_run_the_shared_scripts_steps_in_the_same_order():
    ci_run = ci_steps(CI_RUN.read_text(encoding="utf-8").splitlines())
    assert ci_run == CORE_STEPS
    github = ci_steps(commands()["github eval"])
    gitlab_eval = ci_steps(commands()["gitlab eval"])
    for name, steps in (("github", github), ("gitlab", gitlab_eval)):
        assert [s for s in steps if s in CORE_STEPS] == CORE_STEPS, name
        assert "summary" in steps, name
    for name in ("github compare-main", "gitlab compare-main"):
        assert ci_steps(commands()[name]) == ["compare-main"], name
    every = [s for lines in commands().values() for s in ci_steps(lines)] + ci_run
    assert set(every) <= script_steps()


def test_every_script_the_ci_files_run_is_there():
    lines = [line for found in commands().values() for line in found]
    lines += CI_RUN.read_text(encoding="utf-8").splitlines()
    scripts = {m for line in lines for m in re.findall(r"\bbash (\S+)", line)}
    assert "scripts/ci.sh" in scripts
    assert all((ROOT / path).is_file() for path in scripts), scripts


def test_compare_main_reads_main_reports_where_each_ci_file_puts_them():
    """GitHub: an artifact of paths under out/ holds out/'s files at its root, downloaded into
    the folder compare-main reads. GitLab: the artifacts zip keeps out/, unzipped one level up."""
    steps = workflow()["jobs"]["compare-main"]["steps"]
    main_download = next(s for s in steps if s.get("with", {}).get("run-id"))
    assert ci_steps_with_dirs(commands()["github compare-main"]) == [main_download["with"]["path"]]
    uploaded = next(s for s in workflow()["jobs"]["eval"]["steps"]
                    if s.get("uses", "").startswith("actions/upload-artifact"))
    kept = [p for p in uploaded["with"]["path"].split() if not p.startswith("!")]
    assert kept and all(p.startswith("out/") for p in kept)
    job = gitlab()["compare-main"]
    unzipped = re.search(r"python -m zipfile -e \S+ (\S+)", " ".join(job["script"])).group(1)
    assert gitlab()["eval"]["artifacts"]["paths"] == ["out/"]
    assert ci_steps_with_dirs(job["script"]) == [f"{unzipped}/out"]


def ci_steps_with_dirs(lines: list[str]) -> list[str]:
    """The folders the lines give compare-main."""
    return [m for line in lines for m in re.findall(r"scripts/ci\.sh compare-main (\S+)", line)]


def test_the_compare_job_looks_for_main_runs_of_this_very_workflow():
    """listWorkflowRuns names the workflow by its file: a renamed file would find no run."""
    found = re.findall(r"workflow_id: '([^']+)'", WORKFLOW.read_text(encoding="utf-8"))
    assert found == [WORKFLOW.name]


def makefile_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([a-z][a-z-]*):", text, re.M))


def test_every_make_target_the_shared_script_runs_is_in_the_makefile():
    text = SCRIPT.read_text(encoding="utf-8")
    used = set(re.findall(r"(?<![\w-])make ([a-z][a-z-]*)", text))
    assert {"setup", "test", "docs", "run"} <= used
    assert used <= makefile_targets()


def test_the_shared_scripts_test_step_is_the_readmes_test_command():
    body = re.search(r"^step_test\(\) \{\n(.*?)^\}", SCRIPT.read_text(encoding="utf-8"),
                     re.M | re.S).group(1)
    assert re.search(r"(?<![\w-])make test$", body, re.M)
    assert "make test" in (ROOT / "README.md").read_text(encoding="utf-8")


def parameters(notebook: Path) -> set[str]:
    cell = next(c for c in nbformat.read(notebook, as_version=4).cells
                if "parameters" in c.metadata.get("tags", []))
    return {t.id for node in ast.parse(cell.source).body if isinstance(node, ast.Assign)
            for t in node.targets if isinstance(t, ast.Name)}


def test_every_notebook_the_shared_script_runs_exists_with_its_papermill_parameters():
    text = SCRIPT.read_text(encoding="utf-8").replace("\\\n", " ")
    calls = re.findall(r'"\$BIN/papermill" [^\n]*', text)
    assert calls, "scripts/ci.sh runs no notebook with papermill"
    for call in calls:
        notebook = ROOT / re.search(r"(notebooks/\S+\.ipynb)", call).group(1)
        assert notebook.is_file(), call
        given = set(re.findall(r"-p (\w+) ", call))
        assert given, call
        assert given <= parameters(notebook), f"{call}: not in {notebook.name}'s parameters cell"
    assert {"before", "after", "fail_on_flips"} <= parameters(ROOT / "notebooks/compare.ipynb")


def test_the_shared_script_compares_every_qa_mode_the_main_job_reports_on():
    from ragspine_eval.engines import EVAL_MODES

    modes = re.search(r"^MODES=\(([^)]*)\)", SCRIPT.read_text(encoding="utf-8"), re.M).group(1)
    assert tuple(modes.split()) == tuple(EVAL_MODES)
    assert f"for mode in {' '.join(EVAL_MODES)};" in (ROOT / "Makefile").read_text(encoding="utf-8")


def test_every_ragspine_eval_command_of_the_shared_script_exists_with_its_flags():
    text = SCRIPT.read_text(encoding="utf-8").replace("\\\n", " ")
    calls = re.findall(r'"\$BIN/ragspine-eval" ([a-z]+)([^\n|]*)', text)
    assert calls
    parser = build_parser()
    subparsers = next(a for a in parser._actions  # noqa: SLF001
                      if a.__class__.__name__ == "_SubParsersAction")
    for command, rest in calls:
        assert command in SUBCOMMANDS, command
        flags = {o for a in subparsers.choices[command]._actions  # noqa: SLF001
                 for o in a.option_strings}
        used = set(re.findall(r"(?<!\S)(--[a-z-]+)", rest))
        assert used <= flags, f"ragspine-eval {command}{rest}"


def test_the_paths_the_ci_caches_are_keyed_by_exist():
    """A key over a path that moved hashes nothing and never changes: the cache goes stale."""
    text = WORKFLOW.read_text(encoding="utf-8")
    for call in re.findall(r"hashFiles\(([^)]*)\)", text):
        for pattern in re.findall(r"'([^']+)'", call):
            if not pattern.startswith("out/"):
                assert list(ROOT.glob(pattern)), f"eval.yml hashFiles('{pattern}') matches nothing"
    for cache in gitlab()["eval"]["cache"]:
        for name in cache["key"]["files"]:
            assert (ROOT / name).is_file(), f".gitlab-ci.yml cache key file {name} is not there"


def test_actions_are_pinned_to_a_commit_with_its_version_named():
    for line in WORKFLOW.read_text(encoding="utf-8").splitlines():
        if "uses:" in line:
            assert re.search(r"uses: [\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$", line), line


def test_the_compare_job_reads_the_artifact_the_eval_job_attaches():
    jobs = workflow()["jobs"]
    uploaded = {s["with"]["name"] for s in jobs["eval"]["steps"]
                if s.get("uses", "").startswith("actions/upload-artifact")}
    downloaded = {s["with"]["name"] for s in jobs["compare-main"]["steps"]
                  if s.get("uses", "").startswith("actions/download-artifact")}
    assert downloaded == uploaded == {"eval-reports"}
    assert jobs["compare-main"]["needs"] == "eval"


# --- .ci/run runs the shared script --------------------------------------------------------------


@pytest.fixture
def fake_tools(tmp_path):
    """A PATH where `make` only records its target (and fails the one named in $FAIL_TARGET),
    and chromium and the CJK font are there, so the set-up installs nothing."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "make").write_text('#!/bin/sh\necho "$1" >> "$MAKE_LOG"\n'
                                  '[ "$1" != "${FAIL_TARGET:-}" ]\n')
    (bin_dir / "chromium").write_text("#!/bin/sh\n")
    (bin_dir / "fc-list").write_text('#!/bin/sh\necho "Noto Sans CJK SC:style=Regular"\n')
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    return bin_dir


@pytest.mark.parametrize(("fail", "code", "made"), [
    ("", 0, ["setup", "test", "docs", "run"]),
    ("test", 1, ["setup", "test"]),  # a failing `make test` stops it, as .ci/run always did
])
def test_ci_run_runs_the_shared_scripts_steps_and_stops_at_the_first_failure(
        tmp_path, fake_tools, fail, code, made):
    log = tmp_path / "make.log"
    env = {**os.environ, "PATH": f"{fake_tools}:{os.environ['PATH']}", "MAKE_LOG": str(log),
           "FAIL_TARGET": fail, "OUT": str(tmp_path / "out")}
    done = subprocess.run(["bash", str(CI_RUN)], capture_output=True, text=True, env=env,
                          timeout=60)
    assert done.returncode == code, done.stdout + done.stderr
    assert log.read_text().split() == made
    assert [line.removeprefix("== ci: ") for line in done.stdout.splitlines()
            if line.startswith("== ci: ")] == made


def test_summary_appends_every_markdown_summary_to_the_job_summary(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "qa_tool.md").write_text("# QA tool: PASS\n", encoding="utf-8")
    (out / "extraction.md").write_text("# Extraction: FAIL\n", encoding="utf-8")
    (out / "qa_tool.json").write_text("{}", encoding="utf-8")
    summary = tmp_path / "summary.md"
    env = {**os.environ, "OUT": str(out), "GITHUB_STEP_SUMMARY": str(summary)}
    done = subprocess.run(["bash", str(SCRIPT), "summary"], capture_output=True, text=True,
                          env=env, timeout=60)
    assert done.returncode == 0
    assert summary.read_text(encoding="utf-8") == "# Extraction: FAIL\n\n# QA tool: PASS\n\n"
    env.pop("GITHUB_STEP_SUMMARY")
    env["OUT"] = str(tmp_path / "empty")
    done = subprocess.run(["bash", str(SCRIPT), "summary"], capture_output=True, text=True,
                          env=env, timeout=60)
    assert done.returncode == 0 and "no Markdown summary under" in done.stdout


# --- the compare against main ------------------------------------------------------------------


@pytest.fixture(scope="module")
def two_reports(tmp_path_factory):
    """(main's, the branch's): the branch answers WRONG wrong where main answered it right."""
    folder = tmp_path_factory.mktemp("two-reports")
    return stored_qa_run(folder, "main"), stored_qa_run(folder, "branch", wrong=WRONG)


def compare_main(tmp_path: Path, main_report: Path | None, branch_report: Path,
                 **env: str) -> tuple[subprocess.CompletedProcess, Path]:
    main_dir, out = tmp_path / "main-reports", tmp_path / "out"
    main_dir.mkdir()
    out.mkdir()
    if main_report is not None:
        shutil.copy(main_report, main_dir / "qa_tool.json")
    shutil.copy(branch_report, out / "qa_tool.json")
    environ = {k: v for k, v in os.environ.items()
               if k not in ("GITHUB_STEP_SUMMARY", "GITLAB_CI")}
    done = subprocess.run(["bash", str(SCRIPT), "compare-main", str(main_dir)],
                          capture_output=True, text=True, timeout=300,
                          env={**environ, "OUT": str(out), **env})
    return done, out


def test_compare_main_fails_on_a_case_that_went_from_pass_to_fail_and_leaves_the_html(
        tmp_path, two_reports):
    main, branch = two_reports
    summary = tmp_path / "summary.md"
    done, out = compare_main(tmp_path, main, branch, GITHUB_STEP_SUMMARY=str(summary))
    assert done.returncode == 1, done.stdout + done.stderr
    html = (out / "compare_main_tool.html").read_text(encoding="utf-8")
    assert f"FAIL: 1 case went from pass to fail: {WRONG}" in html
    assert "Traceback" not in html and "An Exception was encountered" not in html
    assert f"FAIL: 1 case went from pass to fail: {WRONG}" in done.stdout  # the gate, in the log
    assert "FAIL: against main" in done.stderr
    assert "main has no" in done.stdout and "agent" in done.stdout  # main kept no agent report
    assert WRONG in summary.read_text(encoding="utf-8")  # the reviewer reads it in the summary


# slow: a second papermill run and render; the pass path of the compare notebook is also held by
# tests/workbench/fronts/test_compare_notebook.py, and the flip that must fail stays in `make test`
@pytest.mark.slow
def test_compare_main_passes_when_no_case_went_from_pass_to_fail(tmp_path, two_reports):
    main, _ = two_reports
    done, out = compare_main(tmp_path, main, main, GITLAB_CI="true")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS: no case went from pass to fail against main" in done.stdout
    html = (out / "compare_main_tool.html").read_text(encoding="utf-8")
    assert "no case went from pass to fail" in html
    assert "section_start:" in done.stdout  # the summary folded into GitLab's job log
    assert "PASS: no case went from pass to fail" in done.stdout.split("section_start:")[1]


def test_compare_main_without_a_report_of_main_says_so_and_passes(tmp_path, two_reports):
    _, branch = two_reports
    done, out = compare_main(tmp_path, None, branch)
    assert done.returncode == 0
    assert "no QA report of main" in done.stdout
    assert not (out / "compare_main_tool.html").exists()
