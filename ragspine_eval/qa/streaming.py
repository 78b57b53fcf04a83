"""Scoring each case as its outcome arrives, while the engine answers the next ones.

When cases run in worker processes the main process only waits for their answers; a cold run
then scored every case after the last one came back, one core busy and the other idle. A
`Streamer` is the runner's `on_outcome` (execution/runner.py, worker processes only): it scores
each answered case as it arrives (every gate, the case record, the verdicts stored in the
verdict cache) and `evaluate` (report.py) takes those results instead of scoring the case again.

Invariants: a streamed case's results are exactly what evaluate's own scoring of it gives (the
same gates, in the same order, built from the same knowledge base texts and judge), so the
report is the same byte for byte however the cases ran; an outcome with an error is never
streamed (evaluate counts it as an error); if scoring any case raises, streaming stops and
evaluate scores every case not yet streamed itself, raising as it always would.

A case reused with its stored verdicts (a resumed run's first half) is not answered, but its
results and record (`CaseRecord.of_stored`, retrieval measured from the stored passages) are
built here too, a few with each answer that arrives (`at(positions, stored)`), while the engine
answers the next: after the last answer evaluate has none of them left to build. They are what
evaluate's own reading of the stored entry gives; an interrupted run leaves the rest to it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ragspine_eval.engines.base import CaseOutcome
from ragspine_eval.golden.cases import GoldenCase
from ragspine_eval.judges.groundedness import EntailmentJudge
from ragspine_eval.qa.case_record import CaseRecord
from ragspine_eval.qa.gates import default_gates, fabrication
from ragspine_eval.qa.report import CaseResult, case_result
from ragspine_eval.qa.scored import ScoredCase, stored_verdict


@dataclass(slots=True)
class Streamed:
    """One answered case scored: per gate (report order, fabrication last) its result or None
    where the gate does not apply, the case's record, and its ranked passages (the claim split's
    context)."""

    results: list[CaseResult | None]
    record: CaseRecord
    ranked: list[dict[str, Any]] | None


class Streamer:
    """Scores the cases of one run as their outcomes arrive; `streamed[i]` for case i."""

    def __init__(self, cases: Sequence[GoldenCase], reference_texts: dict[str, str],
                 judge: EntailmentJudge | None,
                 save: Callable[[int, CaseOutcome, ScoredCase], None] | None = None) -> None:
        self.cases = cases
        self.gates = [*default_gates(reference_texts, judge).values(), fabrication]
        self.save = save
        self.streamed: list[Streamed | None] = [None] * len(cases)
        self.stopped = False

    def __call__(self, i: int, out: CaseOutcome) -> None:
        if self.stopped or out.error:
            return
        case = self.cases[i]
        try:
            results = [None if (v := gate(case, out)) is None else case_result(case.id, v)
                       for gate in self.gates]
            record = CaseRecord.of(case, out)
        except Exception:  # evaluate scores it again, and raises there as it always did
            self.stopped = True
            return
        self.streamed[i] = Streamed(results, record, out.passages)
        if self.save is not None:
            self.save(i, out, ScoredCase(
                {}, [None if r is None else stored_verdict(r) for r in results]))

    def at(self, positions: Sequence[int], stored: Sequence[tuple[int, ScoredCase]] = ()
           ) -> Callable[[int, Any], None]:
        """The on_outcome of a run over some of the cases: its j-th case is case positions[j].
        `stored`: (case index, stored entry) of the cases reused with their verdicts, built a
        share at a time as answers arrive, the last of them with the last answer."""
        pending = deque(stored)
        left = [len(positions)]

        def on_outcome(j: int, out: Any) -> None:
            self(positions[j], out)
            left[0] -= 1
            if pending:
                self._reuse(pending, -(-len(pending) // max(left[0], 1)))
        return on_outcome

    def _reuse(self, pending: deque, n: int) -> None:
        """The next n of `pending` built as evaluate builds a stored case (report.py)."""
        while n and pending and not self.stopped:
            i, known = pending.popleft()
            case = self.cases[i]
            try:
                results = [None if v is None else CaseResult(case.id, *v) for v in known.verdicts]
                record = CaseRecord.of_stored(case, known.record)
            except Exception:  # evaluate builds it again, and raises there as it always did
                self.stopped = True
                return
            self.streamed[i] = Streamed(results, record, known.record.get("passages"))
            n -= 1
