"""The reference in docs/ and the README's front page: every flag of the command line is
documented, every relative link of the README and of the pages names a file that exists, and
every page is in mkdocs.yml's navigation (`mkdocs build --strict` in .ci/run checks the links of
the built site too; this runs without building it)."""

from __future__ import annotations

import argparse
import ast
import importlib.util
import re
from pathlib import Path

import pytest

from ragspine_eval import paths
from ragspine_eval.cli.app import build_parser

ROOT = paths.PROJECT_ROOT
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))


def every_parser(parser: argparse.ArgumentParser, name: str = "ragspine-eval"):
    """The parser and each subcommand's (and sub-subcommand's: `truth draft`, `judge check`),
    with the name a user types."""
    yield name, parser
    for action in parser._actions:  # noqa: SLF001 - argparse keeps its subparsers only here
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for sub_name, sub in action.choices.items():
                yield from every_parser(sub, f"{name} {sub_name}")


def cli_flags() -> list[tuple[str, str]]:
    flags = set()
    for name, parser in every_parser(build_parser()):
        for action in parser._actions:  # noqa: SLF001
            for option in action.option_strings:
                if re.fullmatch(r"--[a-z][a-z0-9-]*", option):
                    flags.add((name, option))
    return sorted(flags)


def documentation() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *PAGES])


def test_the_parser_walk_sees_nested_subcommands():
    names = {name for name, _ in every_parser(build_parser())}
    assert {"ragspine-eval qa", "ragspine-eval truth draft", "ragspine-eval judge check",
            "ragspine-eval runs show"} <= names
    flags = {flag for _, flag in cli_flags()}
    assert {"--mode", "--require-baseline", "--doc-max-cells", "--version"} <= flags


@pytest.mark.parametrize(("command", "flag"), cli_flags())
def test_every_flag_of_the_command_line_is_documented(command, flag):
    # the flag whole: `--doc` is not documented by `--docs`, nor `--cache` by `--cache-key`
    assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", documentation()), (
        f"`{command} {flag}` is in no page of docs/ nor in README.md")


LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def relative_links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return [target for target in LINK.findall(text)
            if not re.match(r"[a-z][a-z0-9+.-]*:", target) and not target.startswith("#")]


@pytest.mark.parametrize("page", [ROOT / "README.md", *PAGES], ids=lambda p: p.name)
def test_relative_links_name_files_that_exist(page):
    broken = [t for t in relative_links(page)
              if not (page.parent / t.split("#", 1)[0]).exists()]
    assert not broken, f"{page.name}: {broken}"


def test_the_readme_is_a_front_page_that_links_into_every_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    linked = {t.split("#", 1)[0] for t in relative_links(ROOT / "README.md")}
    assert {f"docs/{p.name}" for p in PAGES if p.name != "index.md"} <= linked


def test_every_page_is_in_the_navigation():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert [p.name for p in PAGES if not re.search(rf":\s*{re.escape(p.name)}\s*$", nav, re.M)] == []


HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def headings(page: Path) -> list[str]:
    return HEADING.findall(re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S))


def github_anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped (letters of any script,
    digits, `_`, `-` and spaces kept), each space one hyphen, nothing collapsed."""
    text = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower())
    return text.replace(" ", "-")


def site_anchor(heading: str) -> str:
    """The anchor MkDocs gives it: Python-Markdown's toc slugify, the one mkdocs.yml uses."""
    from markdown.extensions.toc import slugify

    return slugify(heading.replace("`", ""), "-")


def anchored_links() -> list[tuple[Path, str]]:
    return [(page, target) for page in [ROOT / "README.md", *PAGES]
            for target in relative_links(page) + re.findall(r"\]\((#[^)\s]+)\)", page.read_text(encoding="utf-8"))
            if "#" in target]


def test_the_anchor_rules_differ_where_a_heading_would_break_on_one_of_them():
    # the reason for the next test: a heading with a flag in it gets two different anchors
    assert github_anchor("Flaky engines: `--repeat N`") == "flaky-engines---repeat-n"
    assert site_anchor("Flaky engines: `--repeat N`") == "flaky-engines-repeat-n"
    assert github_anchor("Two runs compared: notebooks/compare.ipynb") == \
        site_anchor("Two runs compared: notebooks/compare.ipynb")


@pytest.mark.parametrize(("page", "target"), anchored_links(),
                         ids=lambda v: v.name if isinstance(v, Path) else v)
def test_every_anchor_names_a_heading_the_same_on_github_and_on_the_site(page, target):
    # `mkdocs build --strict` checks anchors between pages of the site; this checks the README's
    # links into docs/ too, and that GitHub's anchor of the heading is the one the site gives it
    file, anchor = target.split("#", 1)
    target_page = (page.parent / file).resolve() if file else page
    both = [h for h in headings(target_page)
            if github_anchor(h) == anchor and site_anchor(h) == anchor]
    assert both, (f"{page.name}: #{anchor} is no heading of {target_page.name} whose anchor is "
                  "the same on GitHub and on the built site")


def package_docstrings() -> dict[str, tuple[str, str]]:
    """Each top-level module or subpackage of the package (as docs/layout.md names it: `qa/`,
    `stats.py`) -> (its dotted name, the first paragraph of its docstring on one line)."""
    package = ROOT / "ragspine_eval"
    found = {}
    for path in sorted(package.iterdir()):
        if path.is_dir() and (path / "__init__.py").exists():
            name, source = f"{path.name}/", path / "__init__.py"
        elif path.suffix == ".py" and path.stem != "__init__":
            name, source = path.name, path
        else:
            continue
        doc = ast.get_docstring(ast.parse(source.read_text(encoding="utf-8"))) or ""
        found[name] = (f"ragspine_eval.{path.stem}", " ".join(doc.split("\n\n")[0].split()))
    return found


def layout_floors() -> dict[str, int]:
    """tests/test_layout.py's floors, the ones its import check enforces (loaded from its file:
    the tests folder is not a package)."""
    spec = importlib.util.spec_from_file_location("_layout_floors", Path(__file__).with_name("test_layout.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.FLOORS


def layout_table() -> dict[str, tuple[int, str]]:
    """docs/layout.md's package table: `name` -> (floor, what it owns)."""
    rows = re.findall(r"^\| `([\w./]+)` \| (\d+) \| ([^|]*) \|", (DOCS / "layout.md").read_text(encoding="utf-8"), re.M)
    return {name: (int(floor), owns.strip()) for name, floor, owns in rows}


def test_the_layout_page_lists_every_package_with_its_floor_and_what_its_docstring_says():
    FLOORS = layout_floors()

    docstrings, table = package_docstrings(), layout_table()
    assert {"qa/", "judges/", "retrieval/", "gated/", "stats.py"} <= set(docstrings)
    assert set(table) == set(docstrings), set(table) ^ set(docstrings)
    for name, (dotted, first_paragraph) in docstrings.items():
        floor, owns = table[name]
        assert owns == first_paragraph, f"{name}: the page says {owns!r}, its docstring {first_paragraph!r}"
        assert floor == FLOORS[dotted], f"{name}: floor {floor} on the page, {FLOORS[dotted]} in test_layout"


def test_the_layout_drawing_puts_every_package_on_its_floor():
    FLOORS = layout_floors()

    text = (DOCS / "layout.md").read_text(encoding="utf-8")
    drawing = re.search(r"## The package, floor by floor.*?```\n(.*?)```", text, re.S).group(1)
    drawn = {}
    for line in drawing.splitlines():
        floor, rest = re.match(r"\s*(\d+)\s+(.*)", line).groups()
        for name in re.findall(r"([a-z_]+)(?:/|\.py)(?=\s|$)", rest):
            drawn[f"ragspine_eval.{name}"] = int(floor)
    expected = {name: floor for name, floor in FLOORS.items() if name != "ragspine_eval"}
    assert drawn == expected
