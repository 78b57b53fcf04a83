"""What a run leaves for people and CI: everything computed from a finished report.

One rule: a format shared by every harness is one module (junit: the JUnit XML; summary_md: the
Markdown summary's shape; console: bounded id lists and the progress line; escape: text made
safe for a terminal, XML and Markdown), and what one harness writes in those formats is one
module of its own, `<harness>_files.py` (qa_files, extraction_files, retrieval_files,
answers_files: its console lines, JUnit rows and Markdown summary, each written whole through
files/atomic.py). diff and extraction_diff compare two finished reports case by case. A new
harness adds its `<harness>_files.py`; a new format is a module here and a function in each
harness's module. Where those files may be written, checked before a run starts, is
files/output_paths.py; which of them a gated run was asked for is gated/outputs.py. What
produced a report (provenance) and its statistics (stats) live a floor down, in
ragspine_eval/provenance.py and stats.py, where every harness reads them.

Import the module you need (`from ragspine_eval.outputs import junit`); this package imports
nothing by itself.
"""
