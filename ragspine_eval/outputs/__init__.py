"""What a run leaves for people and CI: everything computed from a finished report.

console (the tables the CLI prints), junit (JUnit XML), summary_md (the Markdown step summary),
diff and extraction_diff (two runs compared case by case: QA reports, and extraction reports per
channel and cell), escape (text made safe for a terminal, XML and Markdown). A new report format
is a module here. What produced a report (provenance) and its statistics (stats) live a floor
down, in ragspine_eval/provenance.py and stats.py, where every harness reads them.

Import the module you need (`from ragspine_eval.outputs import junit`); this package imports
nothing by itself.
"""
