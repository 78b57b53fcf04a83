"""The benchmarks of ragspine_eval: measured, never asserted.

`python -m benchmarks` (or `make bench`) runs every measurement, prints one table with each
target marked met or missed, and writes the figures as JSON under out/bench/. `--quick` runs
the same code on small sizes in seconds (a test smoke-runs it).

Every configuration runs in a fresh child process (`child.py`), so one run's imports, caches
and garbage never weigh on the next, and its peak memory is its own (the parent reads the
child's ru_maxrss with os.wait4).

- qa.py          QA harness: ours, the engine-only floor, and the engine's own harness (peer)
- parallel.py    --jobs 1 against --jobs 2
- extraction.py  run_eval on synthetic cell facts
- notebooks.py   papermill of qa.ipynb against the bare CLI
- judge.py       the financial judge: a cold agent run against lexical, and judge check alone
- report.py      the QA report alone: scoring and writing n cases (`python -m benchmarks.report`)
- targets.py     the issue's targets and how a measurement is judged against each
- goldens.py     golden sets of any size, cycled from the committed one
- profile.py     `python -m benchmarks.profile TASK`: one configuration under py-spy
- invariant.py   two trees' QA reports and exit codes compared (`--before TREE`, cold or `--warm`)
- workspace_invariant.py  the same for extraction, retrieval and answer runs over the realdocs
                 workspace: `--jobs 1`, `--jobs 2`, killed and resumed
- trees.py       two trees timed against each other, interleaved

RESULTS.md records the last full run, the machine, and what each figure means precisely.
"""
