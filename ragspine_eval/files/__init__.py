"""Safe file writing, used by every output of the project (reports, baselines, JUnit, fixtures).

atomic: replace a file whole or not at all (links written through, streams written into);
output_paths: every output path checked before a run writes anything (what a run leaves,
computed from its report, is outputs/).
"""

from ragspine_eval.files.atomic import (
           write_atomic,
           write_bytes_atomic,
           write_json_atomic,
)
from ragspine_eval.files.output_paths import OutputError, check_output_folder, check_outputs

__all__ = ["OutputError", "check_output_folder", "check_outputs", "write_atomic",
           "write_bytes_atomic", "write_json_atomic"]
