"""Safe file writing, used by every output of the project (reports, baselines, JUnit, fixtures).

atomic: replace a file whole or not at all (links written through, streams written into);
outputs: check every output path before a run writes anything.
"""

from ragspine_eval.files.atomic import (
           write_atomic,
           write_bytes_atomic,
           write_json_atomic,
)
from ragspine_eval.files.outputs import OutputError, check_output_folder, check_outputs

__all__ = ["OutputError", "check_output_folder", "check_outputs", "write_atomic",
           "write_bytes_atomic", "write_json_atomic"]
