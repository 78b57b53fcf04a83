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
# retrieval-only runs over a workspace: one entry per workspace, top_k and engine configuration
RETRIEVAL_BASELINE = GOLDEN_DIR / "retrieval_baseline.json"
# answer runs over a workspace: one entry per workspace, route and engine configuration
ANSWERS_BASELINE = GOLDEN_DIR / "answers_baseline.json"


def from_root(path: str | Path) -> Path:
    """A path given to a notebook: absolute as is, relative taken from the project root, so a
    notebook run from notebooks/ or from the root reads and writes the same files."""
    p = Path(path).expanduser()
    return p if p.is_absolute() else PROJECT_ROOT / p


def in_project(path: str | Path) -> bool:
    """True when `path` (resolved) is the project's root or inside it: a workspace `make run`
    builds into out/, a golden set under data/."""
    try:
        Path(path).resolve().relative_to(PROJECT_ROOT)
    except ValueError:
        return False
    return True


def baseline_beside(golden: str | Path, harness: str) -> Path:
    """Where a run over a workspace outside the project keeps its baseline by default: beside
    its golden file, `<golden stem>.<harness>_baseline.json` (the project's committed baselines
    stay the committed sets' own)."""
    golden = Path(golden)
    return golden.parent / f"{golden.stem}.{harness}_baseline.json"
