"""What the CLI prints besides the gate table: the progress line a terminal shows."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ragspine_eval.console import progress_line


def test_progress_line_shows_the_bar_the_count_and_errors():
    assert progress_line("qa agent@http", 10, 40, 0, width=8) == "qa agent@http [##------] 10/40"
    assert progress_line("qa tool", 40, 40, 3, width=8) == "qa tool [########] 40/40 · 3 errors"


@given(total=st.integers(1, 10_000), data=st.data())
def test_progress_bar_keeps_its_width_and_fills_monotonically(total, data):
    done = data.draw(st.integers(0, total))
    bar = progress_line("x", done, total, width=20).split("[")[1].split("]")[0]
    later = progress_line("x", min(total, done + 1), total, width=20).split("[")[1].split("]")[0]
    assert len(bar) == 20 and bar.count("#") <= later.count("#")
    assert (bar.count("#") == 20) == (done == total)
