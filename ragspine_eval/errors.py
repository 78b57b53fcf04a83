"""The one base class of the project's errors: input a run cannot use.

Every error that means "bad input" (a golden line, a knowledge base, a baseline, an engine
spec, an output path, a facts file, a report) derives from `RagspineEvalError`; its str() is
the one line a person reads: the file, the line where there is one, what was wrong and what to
do. The command line catches this class once and exits 2; anything else that escapes is a bug
of ragspine-eval and exits 3, so exit 1 always means a regression.
"""


class RagspineEvalError(Exception):
    """Input the run cannot use; str() is the one line the user sees."""


class ReportError(RagspineEvalError, ValueError):
    """A file that is not a usable report; the message names the file and what is wrong."""
