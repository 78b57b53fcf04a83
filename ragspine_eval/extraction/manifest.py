"""A manifest: many documents of one's own, each with its ground truth, scored as one suite.

    {"baseline": "extraction_baseline.json",          (optional; --baseline wins)
     "documents": [{"document": "docs/q3.xlsx", "ground_truth": "truth/q3.json"}, ...]}

Relative paths are read from the manifest's folder. Each document is one target keyed by its
file name (as `--doc`), so the run keeps one baseline entry per document in one baseline file,
and writes one report, one JUnit file and one Markdown summary across them.

Invariants: a manifest loads whole or not at all; a bad one (bad JSON, an entry without
"document" or "ground_truth", a file that is not there, two documents of one file name) raises
ExtractionInputError naming the manifest, the entry and the reason, before anything runs.
"""

from __future__ import annotations

import json
from pathlib import Path

from ragspine_eval.extraction.adapter import doc_type_of
from ragspine_eval.extraction.records import ExtractionInputError
from ragspine_eval.extraction.run import Target

EXAMPLE = ('{"documents": [{"document": "q3.xlsx", "ground_truth": "q3_truth.json"}], '
           '"baseline": "extraction_baseline.json"}')


def load_manifest(path: str | Path) -> tuple[list[Target], Path | None]:
    """(targets, the baseline the manifest names or None); see the module docstring."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise ExtractionInputError(f"{path}: no such manifest") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ExtractionInputError(f"{path}: cannot read the manifest ({exc})") from None
    except json.JSONDecodeError as exc:
        raise ExtractionInputError(f"{path}:{exc.lineno}:{exc.colno}: bad JSON ({exc.msg})"
                                   ) from None
    entries = data.get("documents") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise ExtractionInputError(f"{path}: a manifest is an object with a non-empty "
                                   f"\"documents\" array, e.g. {EXAMPLE}")
    root = path.parent
    targets: list[Target] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(entries):
        where = f"{path}: documents[{i}]"
        if not isinstance(entry, dict) or not all(
                isinstance(entry.get(k), str) and entry[k] for k in ("document", "ground_truth")):
            raise ExtractionInputError(f"{where}: each entry needs \"document\" and "
                                       f"\"ground_truth\" (paths), got {entry!r}")
        document, truth = root / entry["document"], root / entry["ground_truth"]
        for label, file in (("document", document), ("ground truth", truth)):
            if not file.is_file():
                raise ExtractionInputError(f"{where}: no such {label} {file}")
        doc_type_of(document)
        key = document.name
        if key in seen:
            raise ExtractionInputError(f"{where}: a second document named {key!r} (first at "
                                       f"documents[{seen[key]}]); the baseline keeps one entry "
                                       f"per file name, so rename one of them")
        seen[key] = i
        targets.append(Target.own(document, truth))
    baseline = data.get("baseline")
    if baseline is not None and not (isinstance(baseline, str) and baseline):
        raise ExtractionInputError(f"{path}: \"baseline\" must be a path, got {baseline!r}")
    return targets, (root / baseline if baseline else None)
