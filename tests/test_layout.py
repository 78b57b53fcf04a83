"""The package's layout tells the truth about the design: subpackages per concept, no import
cycle, modules a newcomer reads in one sitting, the public entry points where the README says."""

from __future__ import annotations

import ast
import importlib
import warnings
from pathlib import Path

import pytest

from ragspine_eval import paths

PACKAGE = paths.PROJECT_ROOT / "ragspine_eval"
MAX_LINES = 400


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py")}


def _type_checking_only(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """Every module of the package that `name` imports, at the top or inside a function (a lazy
    import is still a dependency), leaving out imports made for type checkers only."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if _type_checking_only(node, parents):
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from pkg import mod` depends on pkg.mod when that is a module, else on pkg
            targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known
                       else node.module for a in node.names]
        else:
            continue
        found.update(t for t in targets if t in known and t != name)
    return found


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_no_import_cycle_among_the_packages_modules():
    mods = modules()
    known = set(mods)
    graph = {name: imports_of(name, path, known) for name, path in mods.items()}
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_the_cycle_check_can_fail():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_module_is_over_about_400_lines():
    long = {name: n for name, p in modules().items()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long


def test_the_folder_list_shows_the_design():
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and not p.name.startswith("_")}
    assert {"qa", "extraction", "ratchet", "files", "outputs", "workbench", "cli"} <= folders
    top = {p.stem for p in PACKAGE.glob("*.py")}
    assert top <= {"__init__", "_relocated", "errors", "paths"}, top
    for sub in ("qa", "extraction", "ratchet", "files", "outputs", "workbench", "cli"):
        init = PACKAGE / sub / "__init__.py"
        assert ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))), sub


def test_every_module_says_what_it_owns():
    missing = [name for name, p in modules().items()
               if not name.endswith("__main__")
               and not ast.get_docstring(ast.parse(p.read_text(encoding="utf-8")))]
    assert not missing


PUBLIC = ["run_qa_eval", "evaluate", "load_golden_set", "build_eval_kb", "EVAL_MODES",
          "GATE_METRICS", "GROUNDEDNESS_METRICS", "GateMetric", "QAEvalReport",
          "LexicalOverlapJudge", "make_baseline_entry", "compare_to_baseline", "run_eval",
          "ChannelMetric", "EvalReport"]


@pytest.mark.parametrize("name", PUBLIC)
def test_public_entry_points_are_importable_from_the_package_and_listed_in_the_readme(name):
    import ragspine_eval

    assert getattr(ragspine_eval, name) is not None
    assert f"`{name}`" in (paths.PROJECT_ROOT / "README.md").read_text(encoding="utf-8")


def test_extraction_has_its_own_baseline_entry_and_comparison():
    from ragspine_eval import extraction, qa

    assert extraction.make_baseline_entry is not qa.make_baseline_entry
    assert extraction.compare_to_baseline.__module__ == "ragspine_eval.extraction.report"


def test_an_old_module_path_still_imports_the_same_module_with_a_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = importlib.import_module("ragspine_eval.engines.base")
    new = importlib.import_module("ragspine_eval.qa.engines.base")
    assert old.CaseOutcome is new.CaseOutcome  # one class: isinstance checks keep working
    assert any("ragspine_eval.qa.engines" in str(w.message) for w in caught)


def test_every_project_error_shares_one_base():
    from ragspine_eval.errors import RagspineEvalError
    from ragspine_eval.extraction.records import ExtractionInputError
    from ragspine_eval.files import OutputError
    from ragspine_eval.outputs.diff import ReportError
    from ragspine_eval.qa.engines import EngineSpecError
    from ragspine_eval.qa.golden import GoldenSetError
    from ragspine_eval.qa.kb import KnowledgeBaseError
    from ragspine_eval.ratchet import BaselineError

    for cls in (ExtractionInputError, OutputError, ReportError, EngineSpecError, GoldenSetError,
                KnowledgeBaseError, BaselineError):
        assert issubclass(cls, RagspineEvalError), cls
