"""The reference in docs/ and the README's front page: every flag of the command line is
documented, every relative link of the README and of the pages names a file that exists, and
every page is in mkdocs.yml's navigation (`mkdocs build --strict` in .ci/run checks the links of
the built site too; this runs without building it)."""

from __future__ import annotations

import argparse
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
