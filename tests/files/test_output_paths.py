"""files/output_paths.check_replaceable: a file a command writes whole from its inputs is never
one of them (with --force too), never a folder, and an existing one only with --force; the
command's own words follow the file's name."""

from __future__ import annotations

import pytest

from ragspine_eval.files.output_paths import check_replaceable


class Refused(Exception):
    pass


def check(path, force=False, inputs=()):
    return check_replaceable(path, force=force, inputs=inputs, error=Refused,
                             is_input="is an input", exists="say --force")


def test_a_new_file_is_written_and_an_existing_one_only_with_force(tmp_path):
    out = tmp_path / "out.json"
    assert check(out) == out
    out.write_text("{}", encoding="utf-8")
    with pytest.raises(Refused, match=r"out\.json: already exists; say --force$"):
        check(out)
    assert check(out, force=True) == out


def test_an_input_is_never_replaced_even_with_force_nor_a_folder(tmp_path):
    source = tmp_path / "in.json"
    source.write_text("{}", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    with pytest.raises(Refused, match=r"in\.json: is an input$"):
        check(tmp_path / "sub" / ".." / "in.json", force=True, inputs=[source])
    with pytest.raises(Refused, match="is a folder; give a file name for --out"):
        check(tmp_path / "sub", force=True)
