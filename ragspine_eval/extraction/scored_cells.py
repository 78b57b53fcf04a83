"""A report's scored cells and ground-truth fingerprints, held as columns (issue 33).

`run_eval` scores a million cells on three channels; a `CellScore` object per cell and channel
(and an expected and an actual claim each) cost more time and memory than the scoring itself.
`ScoredCells` keeps instead the ground-truth cells and the fact each was aligned with (the
records run_eval was given, not copies), and per channel one byte a cell saying whether the
channel scored it and whether it was right. It is a `Sequence[CellScore]`: each CellScore is
built when it is read, from the same claim functions run_eval compares with, so iterating it
gives the list run_eval built before (cells in ground-truth order, each cell's channels in the
report's channel order). `Fingerprints` is the `golden` mapping {locator: 16-hex fingerprint}
over 8 bytes a cell.

Invariants: a ScoredCells equals the list of the CellScores it yields (and compares equal to
such a list); the records it refers to are read, never changed, so a caller must not change a
fact or ground-truth record while the report is in use (run_eval's inputs are treated as
read-only, as they always were for the claims shared with them); both classes pickle (a
document worker's report crosses a process boundary).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import compress
from typing import Any, overload

from ragspine_eval.extraction.columns import both, but_not, either
from ragspine_eval.extraction.report import CellScore

Claim = Callable[[Mapping[str, Any]], Any]


class ScoredCells(Sequence[CellScore]):
    """The scored cells of one report, by column (see the module docstring).

    `cells[i]` is ground-truth cell i, `facts[i]` the fact it was scored against; for each
    channel in `channels` (report order), `scored[ch][i]` and `correct[ch][i]` are 0 or 1.
    """

    def __init__(self, cells: list[Mapping[str, Any]], facts: list[Mapping[str, Any]],
                 channels: Sequence[str], scored: Mapping[str, bytes],
                 correct: Mapping[str, bytes], claims: Mapping[str, Claim]) -> None:
        self.cells, self.facts, self.channels = cells, facts, tuple(channels)
        self.scored, self.correct = dict(scored), dict(correct)
        self._claims = {ch: claims[ch] for ch in self.channels}
        self._length = sum(self.scored[ch].count(1) for ch in self.channels)
        self._index: list[tuple[int, str]] | None = None

    def __len__(self) -> int:
        return self._length

    def _score(self, i: int, channel: str) -> CellScore:
        cell, claim = self.cells[i], self._claims[channel]
        expected = claim(cell)
        ok = bool(self.correct[channel][i])
        # a right claim on a dict channel is shown as the expected one (equal, the same JSON)
        actual = expected if ok and channel != "cell_value" else claim(self.facts[i])
        return CellScore(channel, cell["sheet"], cell["cell_ref"], expected, actual, ok,
                         cell.get("feature"))

    def __iter__(self) -> Iterator[CellScore]:
        scored = [self.scored[ch] for ch in self.channels]
        pairs = list(zip(self.channels, scored, strict=True))
        if len(pairs) == 1:
            channel, flags = pairs[0]
            for i in compress(range(len(self.cells)), flags):
                yield self._score(i, channel)
            return
        anything = b""
        for flags in scored:
            anything = flags if not anything else either(anything, flags)
        for i in compress(range(len(self.cells)), anything):
            for channel, flags in pairs:
                if flags[i]:
                    yield self._score(i, channel)

    @overload
    def __getitem__(self, k: int) -> CellScore: ...

    @overload
    def __getitem__(self, k: slice) -> list[CellScore]: ...

    def __getitem__(self, k: int | slice) -> CellScore | list[CellScore]:
        if self._index is None:
            self._index = [(i, ch) for i in range(len(self.cells)) for ch in self.channels
                           if self.scored[ch][i]]
        if isinstance(k, slice):
            return [self._score(i, ch) for i, ch in self._index[k]]
        i, ch = self._index[k]
        return self._score(i, ch)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ScoredCells({len(self)} scores over {len(self.cells)} cells)"

    def locators(self, channel: str, correct: bool) -> list[str]:
        """The locators of the cells `channel` scored right (correct=True) or wrong."""
        if channel not in self.scored:
            return []
        scored, right = self.scored[channel], self.correct[channel]
        chosen = both(scored, right) if correct else but_not(scored, right)
        return [f"{c['sheet']}!{c['cell_ref']}" for c in compress(self.cells, chosen)]

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self.cells, self.facts, self.channels, self.scored, self.correct,
                           self._claims))


def _rebuild(*args: Any) -> ScoredCells:
    return ScoredCells(*args)


class Fingerprints(Mapping[str, str]):
    """{locator: fingerprint} of every ground-truth cell, in its order, over 8 bytes a cell
    (the fingerprint's 16 hex digits are the first 8 bytes of its SHA-256). `digests` is those
    bytes, or a function giving them, called when the mapping is first read (run_eval's
    report: a million cells hashed only when a baseline entry or the report's JSON needs
    them)."""

    def __init__(self, cells: list[Mapping[str, Any]],
                 digests: bytes | Callable[[], bytes]) -> None:
        self.cells = cells
        self._digests = digests
        self._where: dict[str, int] | None = None

    @property
    def digests(self) -> bytes:
        if callable(self._digests):
            digests = self._digests()
            if len(digests) != 8 * len(self.cells):
                raise ValueError(f"{len(digests)} bytes of digests for {len(self.cells)} cells")
            self._digests = digests
        return self._digests

    def __len__(self) -> int:
        return len(self.cells)

    def __iter__(self) -> Iterator[str]:
        return (f"{c['sheet']}!{c['cell_ref']}" for c in self.cells)

    def _at(self, i: int) -> str:
        return self.digests[8 * i:8 * i + 8].hex()

    def __getitem__(self, loc: str) -> str:
        if self._where is None:
            self._where = {loc: i for i, loc in enumerate(self)}
        return self._at(self._where[loc])

    def __contains__(self, loc: object) -> bool:
        try:
            self[loc]  # type: ignore[index]
        except (KeyError, TypeError):
            return False
        return True

    def items(self) -> Any:
        text = self.digests.hex()
        return zip(self, (text[k:k + 16] for k in range(0, len(text), 16)), strict=True)

    def to_dict(self) -> dict[str, str]:
        return dict(self.items())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mapping):
            return NotImplemented
        return len(self) == len(other) and self.to_dict() == dict(other.items())

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Fingerprints({len(self)} cells)"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Fingerprints, (self.cells, self.digests))
