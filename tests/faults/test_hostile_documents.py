"""Issue 23's hostile documents, run through the command line as a user would, each in its own
process under a 4 GiB address-space limit: a workbook of about 1.6 KB whose sheet reaches
XFD1048576 (a far cell, a vast merge, a vast conditional format). `truth draft`, `truth check`
and `extraction --doc` each end with exit 0 (the cells that exist) or exit 2 with one line
naming the document, the sheet and the reason; never a traceback, never the machine. Speed is
measured in benchmarks/RESULTS.md; the subprocess timeout here only stops a hang."""

from __future__ import annotations

import json
import resource
import subprocess
import sys

import pytest
from hostile_documents import FAR_CORNER, NORMAL_CELLS, SHEET, hostile_xlsx

FOUR_GIB = 4 * 1024 ** 3
HANG = 300  # seconds: far past any answer; only a hang reaches it

DOCUMENTS = {
    "far cell": {"far_cell": True},
    "vast merge": {"merge": "A5:XFD1048576"},
    "vast conditional format": {"conditional": "A1:XFD1048576"},
}
# (document, command) -> (exit code, what the one line of an exit 2 says)
EXPECTED = {
    ("far cell", "draft"): (0, None), ("far cell", "check"): (0, None),
    ("far cell", "extraction"): (2, "used range A1:XFD1048576"),
    ("vast merge", "draft"): (2, "merges cover 17,179,803,647 cells"),
    ("vast merge", "check"): (2, "merges cover 17,179,803,647 cells"),
    ("vast merge", "extraction"): (2, "used range A1:XFD1048576"),
    ("vast conditional format", "draft"): (0, None),
    ("vast conditional format", "check"): (0, None),
    ("vast conditional format", "extraction"): (2, "conditional format over A1:XFD1048576"),
}


def _cap_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (FOUR_GIB, FOUR_GIB))


def ragspine_eval(*argv: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ragspine_eval.cli", *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=HANG,
                          preexec_fn=_cap_address_space)


@pytest.mark.parametrize(("kind", "command"), sorted(EXPECTED))
def test_a_vast_but_empty_sheet_answers_with_its_cells_or_one_line(tmp_path, kind, command):
    doc = hostile_xlsx(tmp_path / "hostile.xlsx", **DOCUMENTS[kind])
    truth = tmp_path / "truth.json"
    truth.write_text(json.dumps({"cells": [{"sheet": SHEET, "cell_ref": "A1",
                                            "value": "name"}]}), encoding="utf-8")
    draft = tmp_path / "draft.json"
    argv = {"draft": ("truth", "draft", str(doc), "--out", str(draft)),
            "check": ("truth", "check", str(truth), "--doc", str(doc)),
            "extraction": ("extraction", "--doc", str(doc), "--ground-truth", str(truth))}
    done = ragspine_eval(*argv[command], cwd=tmp_path)
    code, reason = EXPECTED[kind, command]
    assert done.returncode == code, done.stderr[-2000:]
    assert "Traceback" not in done.stderr + done.stdout
    if code == 2:
        assert done.stderr.startswith("error: ") and done.stderr.strip().count("\n") == 0
        assert f"{doc}: sheet" in done.stderr and repr(SHEET) in done.stderr
        assert reason in done.stderr, done.stderr
        assert not draft.exists()
    elif command == "draft":
        cells = {c["cell_ref"]: c["value"] for c in json.loads(draft.read_text("utf-8"))["cells"]}
        expected = dict(NORMAL_CELLS) | ({FAR_CORNER: "far"} if kind == "far cell" else {})
        assert cells == expected
    else:
        assert done.stdout.rstrip().endswith("OK: 0 error(s), 0 warning(s)"), done.stdout


def mixed_manifest(tmp_path):
    """A manifest of the fixtures' product_lines.xlsx and the far-cell workbook (far.xlsx):
    (the manifest, the hostile document)."""
    from ragspine_eval import paths

    good = tmp_path / "product_lines.xlsx"
    good.write_bytes((paths.FIXTURES_DIR / "product_lines.xlsx").read_bytes())
    good_truth = tmp_path / "good_truth.json"
    good_truth.write_bytes((paths.FIXTURES_DIR / "fixtures_ground_truth.json").read_bytes())
    bad = hostile_xlsx(tmp_path / "far.xlsx", far_cell=True)
    bad_truth = tmp_path / "far_truth.json"
    bad_truth.write_text(json.dumps({"cells": [{"sheet": SHEET, "cell_ref": "A1",
                                                "value": "name"}]}), encoding="utf-8")
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"documents": [
        {"document": good.name, "ground_truth": good_truth.name},
        {"document": bad.name, "ground_truth": bad_truth.name}]}), encoding="utf-8")
    return manifest, bad


def test_one_hostile_document_of_a_manifest_is_kept_apart_and_the_others_are_scored(tmp_path):
    manifest, bad = mixed_manifest(tmp_path)
    report = tmp_path / "report.json"
    done = ragspine_eval("extraction", "--manifest", str(manifest), "--report", str(report),
                         cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"error: engine failure on a document, kept apart (not scored, not gated, its " \
           f"baseline entry unchanged): {bad}: sheet 'data'" in done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith(
        "FAIL: the engine failed on 1 document(s), kept apart: far.xlsx (exit 2")
    data = json.loads(report.read_text(encoding="utf-8"))
    assert list(data["documents"]) == ["product_lines.xlsx"]
    assert data["documents"]["product_lines.xlsx"]["channels"]["cell_value"]["total"] > 0
    failure = data["failures"]["far.xlsx"]
    assert failure["document"] == "far.xlsx" and failure["limit"] == "size"
    assert "'data'" in failure["reason"] and "A1:XFD1048576" in failure["reason"]
    assert any(w.startswith("engine failure on a document, kept apart and not scored: "
                            f"{bad}: sheet 'data'") for w in data["warnings"])


def test_the_worker_limits_are_flags(capsys, tmp_path):
    from ragspine_eval.cli.app import main

    doc = hostile_xlsx(tmp_path / "far.xlsx", far_cell=True)
    truth = tmp_path / "truth.json"
    truth.write_text(json.dumps({"cells": [{"sheet": SHEET, "cell_ref": "A1"}]}), "utf-8")
    code = main(["extraction", "--doc", str(doc), "--ground-truth", str(truth),
                 "--doc-max-cells", str(10 ** 12), "--doc-timeout", "0.5"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert f"{doc}: the engine did not finish reading this document within the 0.5 s" in err
    with pytest.raises(SystemExit) as bad_flag:  # argparse refuses it before the run
        main(["extraction", "--doc", str(doc), "--ground-truth", str(truth),
              "--doc-memory-mb", "0"])
    assert bad_flag.value.code == 2 and "--doc-memory-mb" in capsys.readouterr().err


def test_a_document_kept_apart_leaves_the_baseline_as_it_was(capsys, tmp_path):
    from ragspine_eval import paths
    from ragspine_eval.cli.app import main

    good = tmp_path / "product_lines.xlsx"
    good.write_bytes((paths.FIXTURES_DIR / "product_lines.xlsx").read_bytes())
    (tmp_path / "good.json").write_bytes(
        (paths.FIXTURES_DIR / "fixtures_ground_truth.json").read_bytes())
    hostile_xlsx(tmp_path / "far.xlsx", far_cell=True)
    (tmp_path / "far.json").write_text(json.dumps({"cells": [{"sheet": SHEET,
                                                              "cell_ref": "A1"}]}), "utf-8")
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"baseline": "b.json", "documents": [
        {"document": "product_lines.xlsx", "ground_truth": "good.json"},
        {"document": "far.xlsx", "ground_truth": "far.json"}]}), encoding="utf-8")
    code = main(["extraction", "--manifest", str(manifest), "--update-baseline"])
    out = capsys.readouterr().out
    assert code == 2 and not (tmp_path / "b.json").exists()
    assert f"baseline: {tmp_path / 'b.json'} left as it was" in out


def test_the_extraction_notebook_shows_a_hostile_document_of_a_manifest_as_a_failure(tmp_path):
    """The notebook's run (workbench.run_extraction) names the document the bounded worker
    failed on beside the scored ones, and its gate fails, as the CLI's exit 2 does."""
    from ragspine_eval import workbench

    manifest, _bad = mixed_manifest(tmp_path)
    ex = workbench.run_extraction("all", None, None, tmp_path / "report.json",
                                  manifest=manifest, store=False)
    assert list(ex.run.reports) == ["product_lines.xlsx"]
    assert list(ex.failures) == ["far.xlsx"] and "A1:XFD1048576" in ex.failures["far.xlsx"]
    with pytest.raises(AssertionError, match="far.xlsx: FAIL because the run failed on this "
                                             "document"):
        workbench.assert_gate(ex, False)
