"""Golden sets of any size, made by cycling the committed one with unique ids.

Case i of a set of n is line i mod 71 of data/golden/qa_golden_set.jsonl, with the id
`<id>#<round>`, so every case is valid, ids are unique, and a 10k set holds each committed case
about 140 times. The engine is deterministic, so a repeated case costs what the original costs.
"""

from __future__ import annotations

import json
from pathlib import Path

from ragspine_eval.paths import QA_GOLDEN_SET


def cycled_golden_set(n: int, folder: Path, source: Path = QA_GOLDEN_SET) -> Path:
    """Write (once) a golden set of n cases into folder and return its path."""
    path = folder / f"golden_{n}.jsonl"
    if path.exists():
        return path
    records = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()
               if line.strip()]
    folder.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as out:
        for i in range(n):
            record = dict(records[i % len(records)])
            record["id"] = f"{record['id']}#{i // len(records)}"
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    tmp.replace(path)
    return path
