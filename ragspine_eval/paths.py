"""Where the project's data lives.

Every default path resolves from the project root, never from the working directory, so the
CLI, the tests and the notebooks (papermill runs them from notebooks/ or from the root) agree.
"""

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = PROJECT_ROOT / "data"
KB_DIR = DATA_DIR / "kb"
GOLDEN_DIR = DATA_DIR / "golden"
FIXTURES_DIR = DATA_DIR / "fixtures"
OUT_DIR = PROJECT_ROOT / "out"

QA_GOLDEN_SET = GOLDEN_DIR / "qa_golden_set.jsonl"
QA_BASELINE = GOLDEN_DIR / "qa_baseline.json"
EXTRACTION_BASELINE = GOLDEN_DIR / "extraction_baseline.json"


def resolve(path: str | Path) -> Path:
    """A user-given path: absolute as is; relative paths are taken from the working directory
    when they exist there, else from the project root (so `data/...` works from notebooks/)."""
    p = Path(path).expanduser()
    if p.is_absolute() or p.exists():
        return p
    rooted = PROJECT_ROOT / p
    return rooted if rooted.exists() or rooted.parent.exists() else p
