"""The package's layout tells the truth about the design: subpackages per concept in floors, no
import cycle, nothing importing a floor above its own, modules a newcomer reads in one sitting,
the public entry points where the README says."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ragspine_eval import paths

PACKAGE = paths.PROJECT_ROOT / "ragspine_eval"
MAX_LINES = 400

# Each part of the package and its floor: a module may import from its own floor and below,
# never above (the picture in ../shared/ARCHITECTURE.md and docs/layout.md).
FLOORS = {
    "ragspine_eval": 0, "ragspine_eval.errors": 0, "ragspine_eval.paths": 0,
    "ragspine_eval.lazy": 0, "ragspine_eval.stats": 0, "ragspine_eval.provenance": 0,
    "ragspine_eval.fingerprints": 0, "ragspine_eval.files": 0,
    "ragspine_eval.ratchet": 1, "ragspine_eval.golden": 1, "ragspine_eval.judges": 1,
    # the knowledge bases retrieved from (the KB folder, engine workspaces): inputs, like the
    # golden sets, read below everything that retrieves from them or measures what it retrieved
    "ragspine_eval.knowledge": 1,
    "ragspine_eval.retrieval": 2,
    # which model the engine's agent asks and its cassette: below the engines that hand each
    # case its provider, needing only the ground floor
    "ragspine_eval.models": 2,
    "ragspine_eval.engines": 3,
    "ragspine_eval.execution": 4,
    # the run path every harness that asks an engine shares (plan, answer, score, keep, report):
    # beside execution/, which it drives; the harnesses above give it their cases and scorers
    "ragspine_eval.pipeline": 4,
    "ragspine_eval.qa": 5, "ragspine_eval.extraction": 5,
    # the retrieval-only harness calls the engine (retrieval_only/engine.py), like qa and
    # extraction, and uses engines/ (the configuration) and execution/ (latency): floor 5
    "ragspine_eval.retrieval_only": 5,
    # the answer harness calls the engine's ask route over a workspace: floor 5, beside them
    "ragspine_eval.answers": 5,
    "ragspine_eval.outputs": 6,
    # gold drafts ask the engine through the answer harness (floor 5) and read workspaces and
    # gold files (floor 1); the workbench's review views and the CLI use them
    "ragspine_eval.drafting": 6,
    "ragspine_eval.runs": 7,
    "ragspine_eval.gated": 8,
    "ragspine_eval.workbench": 9,
    "ragspine_eval.cli": 10,
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """Every module of the package that `name` imports, at the top, inside a function (a lazy
    import is still a dependency) or for type checkers only (`if TYPE_CHECKING:`: a module
    whose annotations name another's class depends on it as much as one that calls it)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
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


def test_annotation_only_imports_count_as_dependencies(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from __future__ import annotations\nfrom typing import TYPE_CHECKING\n"
                      "if TYPE_CHECKING:\n    from ragspine_eval.qa.report import QAEvalReport\n",
                      encoding="utf-8")
    assert imports_of("m", module, {"ragspine_eval.qa.report"}) == {"ragspine_eval.qa.report"}


# Every module reads top to bottom: no function in it longer than a screen, none taking more
# than a handful of parameters (a run's options travel as pipeline.spec's RunWhat and RunHow, not
# as long parameter lists), and no module a newcomer cannot read in one sitting.
MAX_FUNCTION_LINES = 60
MAX_PARAMETERS = 8

# Every module of the package is held to the rule: no file is excused from it.


def long_functions(path: Path) -> list[str]:
    """`name (lines, parameters)` of each function of the module over either limit (self and
    cls not counted; *args and **kwargs count one each: a bag of options is still options)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
            n = (len([a for a in params if a.arg not in ("self", "cls")])
                 + (args.vararg is not None) + (args.kwarg is not None))
            lines = node.end_lineno - node.lineno + 1  # type: ignore[operator]
            if lines > MAX_FUNCTION_LINES or n > MAX_PARAMETERS:
                found.append(f"{node.name} ({lines} lines, {n} parameters)")
    return found


def test_no_function_of_the_package_is_longer_than_a_screen_or_takes_many_parameters():
    long = {name: found for name, p in modules().items()
            if (found := long_functions(p))}
    assert not long, long


def test_the_function_size_check_can_fail(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f(a, b, c, d, e, f, g, h, i):\n    pass\n" + "def g():\n"
                      + "    x = 1\n" * 60 + "def h(self, a, b, c, d, e, f, g, *args, **kw):\n"
                      "    pass\n", encoding="utf-8")
    assert long_functions(module) == ["f (2 lines, 9 parameters)", "g (61 lines, 0 parameters)",
                                      "h (2 lines, 9 parameters)"]


# A harness's Harness object lives in the harness's folder but on the gated run's floor: it
# composes the harness with the outputs, the ratchet and the run store (gated/harness.py).
HARNESS_OBJECTS = {"ragspine_eval.qa.harness", "ragspine_eval.retrieval_only.harness",
                   "ragspine_eval.answers.harness", "ragspine_eval.extraction.harness"}


def part_of(module: str) -> str:
    """The part of the package (a FLOORS key) a module belongs to: its subpackage, or itself;
    a harness's Harness object, the gated run's."""
    if module in HARNESS_OBJECTS:
        return "ragspine_eval.gated"
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def test_every_harness_is_one_folder_and_one_harness_object():
    """Every subclass of gated.harness.Harness is defined in a `<harness>/harness.py` listed
    above, and each of those defines one; docs/layout.md says how to add one."""
    found = {}
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                    getattr(b, "id", None) == "Harness" for b in node.bases):
                found.setdefault(name, []).append(node.name)
    assert set(found) == HARNESS_OBJECTS, found
    assert all(len(classes) == 1 for classes in found.values()), found
    layout = (paths.PROJECT_ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    assert "A new harness is one folder" in layout


def test_every_part_of_the_package_has_a_floor():
    assert {part_of(name) for name in modules()} <= set(FLOORS), \
        set(map(part_of, modules())) - set(FLOORS)


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{name} -> {target}" for name, targets in graph.items() for target in targets
                  if FLOORS[part_of(target)] > FLOORS[part_of(name)])


def test_nothing_imports_a_floor_above_its_own():
    mods = modules()
    known = set(mods)
    graph = {name: imports_of(name, path, known) for name, path in mods.items()}
    assert upward_imports(graph) == []


def test_no_import_cycle_among_the_packages_parts():
    mods = modules()
    known = set(mods)
    parts: dict[str, set[str]] = {}
    for name, path in mods.items():
        parts.setdefault(part_of(name), set()).update(
            part_of(t) for t in imports_of(name, path, known) if part_of(t) != part_of(name))
    assert find_cycle(parts) is None, " -> ".join(find_cycle(parts) or [])


def test_the_floor_check_can_fail():
    assert upward_imports({"ragspine_eval.qa.report": {"ragspine_eval.outputs.console"}}) == [
        "ragspine_eval.qa.report -> ragspine_eval.outputs.console"]
    assert upward_imports({"ragspine_eval.outputs.console": {"ragspine_eval.qa.report"}}) == []


def test_the_cycle_check_can_fail():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_module_is_over_400_lines():
    long = {name: n for name, p in modules().items()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, long


def test_the_folder_list_shows_the_design():
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and not p.name.startswith("_")}
    subpackages = {name.split(".")[1] for name in FLOORS if name.count(".") == 1
                   and (PACKAGE / name.split(".")[1]).is_dir()}
    assert {"golden", "judges", "retrieval", "engines", "execution", "qa", "extraction",
            "ratchet", "files", "outputs", "runs", "gated", "workbench", "cli"} <= folders
    assert folders - {"__pycache__"} <= subpackages, folders - subpackages
    top = {p.stem for p in PACKAGE.glob("*.py")}
    assert top <= {"__init__", "errors", "paths", "lazy", "stats", "fingerprints", "provenance"}, top
    for sub in sorted(subpackages):
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


def test_every_project_error_shares_one_base():
    from ragspine_eval.errors import RagspineEvalError
    from ragspine_eval.extraction.records import ExtractionInputError
    from ragspine_eval.files import OutputError
    from ragspine_eval.outputs.diff import ReportError
    from ragspine_eval.engines import EngineSpecError
    from ragspine_eval.golden.cases import GoldenSetError
    from ragspine_eval.knowledge.kb import KnowledgeBaseError
    from ragspine_eval.ratchet import BaselineError

    for cls in (ExtractionInputError, OutputError, ReportError, EngineSpecError, GoldenSetError,
                KnowledgeBaseError, BaselineError):
        assert issubclass(cls, RagspineEvalError), cls


def test_no_two_test_modules_share_a_name():
    # pytest imports a test module by its basename (tests/ folders are not packages): a second
    # tests/*/test_report.py stops the whole suite at collection, which a run of one folder
    # never shows
    seen: dict[str, Path] = {}
    twins = []
    for path in sorted((paths.PROJECT_ROOT / "tests").rglob("test_*.py")):
        if path.name in seen:
            twins.append((seen[path.name], path))
        seen.setdefault(path.name, path)
    assert not twins


# The workbench's rooms, from the top down: rendering/ (papermill, the HTML reports, the kernel),
# fronts/ (one module per notebook), views/ (frames, charts, explorers, case views). A room
# imports only the rooms below it, so a view can be used by any front and a test.
WORKBENCH_ROOMS = {"rendering": 2, "fronts": 1, "views": 0}


def room_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 3 and parts[1] == "workbench" else None


def upward_room_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{name} -> {target}" for name, targets in graph.items()
                  for target in targets
                  if (a := room_of(name)) and (b := room_of(target))
                  and WORKBENCH_ROOMS[b] > WORKBENCH_ROOMS[a])


def test_the_workbench_rooms_import_only_the_rooms_below():
    mods = modules()
    known = set(mods)
    rooms = {room_of(name) for name in mods} - {None}
    assert rooms == set(WORKBENCH_ROOMS), rooms
    graph = {name: imports_of(name, path, known) for name, path in mods.items()}
    assert upward_room_imports(graph) == []


def test_the_room_check_can_fail():
    assert upward_room_imports({"ragspine_eval.workbench.views.charts":
                                {"ragspine_eval.workbench.fronts.qa"}}) == [
        "ragspine_eval.workbench.views.charts -> ragspine_eval.workbench.fronts.qa"]


def test_no_two_classes_of_the_package_share_a_name():
    seen: dict[str, list[str]] = {}
    for name, path in modules().items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef):
                seen.setdefault(node.name, []).append(name)
    assert {cls: where for cls, where in seen.items() if len(where) > 1} == {}
