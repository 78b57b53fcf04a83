"""Project-wide promises: the conda environment matches pyproject.toml, and nothing of ours
imports the engine's own harness."""

from __future__ import annotations

import re
import tomllib

import nbformat
import yaml

from ragspine_eval import paths

ROOT = paths.PROJECT_ROOT


def _normalise(requirement: str) -> str:
    return re.sub(r"\s+", "", requirement).lower().replace("_", "-")


def test_environment_yml_lists_the_same_dependencies_as_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = {_normalise(r) for r in project["dependencies"]}
    for extra in ("dev", "dask"):
        wanted |= {_normalise(r) for r in project["optional-dependencies"][extra]}
    env = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    assert {_normalise(r) for r in pip} == wanted
    python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python"))
    assert python.replace("python", "") == project["requires-python"]


def test_nothing_imports_the_engines_own_harness():
    pattern = re.compile(r"^\s*(from\s+ragspine\.eval\b|import\s+ragspine\.eval\b|"
                         r"from\s+ragspine\s+import\s+eval\b)", re.MULTILINE)
    texts = {p: p.read_text(encoding="utf-8") for p in
             [*ROOT.joinpath("ragspine_eval").rglob("*.py"), *ROOT.joinpath("scripts").glob("*.py")]}
    for nb in ROOT.joinpath("notebooks").glob("*.ipynb"):
        texts[nb] = "\n".join(c.source for c in nbformat.read(nb, as_version=4).cells
                              if c.cell_type == "code")
    assert pattern.search("from ragspine.eval.qa_eval import x")  # the check can fail
    offenders = [str(p.relative_to(ROOT)) for p, text in texts.items() if pattern.search(text)]
    assert offenders == []
