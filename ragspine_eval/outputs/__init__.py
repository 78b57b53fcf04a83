"""What a run leaves for people and CI: everything computed from a finished report.

provenance (what produced a report), stats (Wilson intervals, McNemar), console (the tables the
CLI prints), junit (JUnit XML), summary_md (the Markdown step summary), diff (two runs compared
case by case: QA reports, and extraction reports per channel and cell).

Import the module you need (`from ragspine_eval.outputs import junit`); this package imports
nothing by itself, so the ratchet can use provenance without loading the rest.
"""
