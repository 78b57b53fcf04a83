"""What a run's model calls cost: a price table the user supplies, read strictly.

```toml
currency = "USD"                 # optional, shown beside every cost
[models."openai/gpt-4o-mini"]    # the model as --model names it
input = 0.15                     # per million prompt tokens
output = 0.60                    # per million completion tokens
```

None is shipped as fact: prices change and differ by contract, so a cost is only ever computed
from a table the user points at (`--prices FILE`).

Invariants: an unknown key, a price that is not a number >= 0, or a file that is not TOML is a
`PriceTableError` (exit 2) naming the file and the key; a model the table does not list has no
cost (None), never a guessed one; a cost is rounded to 6 decimals, so two runs of the same
tokens write the same text.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragspine_eval.errors import RagspineEvalError

PER = 1_000_000


class PriceTableError(RagspineEvalError, ValueError):
    """A price table that cannot be used: the file, the key and why."""


@dataclass(frozen=True)
class PriceTable:
    """Per model, (input, output) price per million tokens; `currency` as the file says."""

    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    currency: str = "USD"
    path: str | None = None

    def cost(self, model: str | None, input_tokens: int, output_tokens: int) -> float | None:
        if model is None or model not in self.prices:
            return None
        price_in, price_out = self.prices[model]
        return round((input_tokens * price_in + output_tokens * price_out) / PER, 6)


def load_prices(path: str | Path | None) -> PriceTable | None:
    """The table at `path` (None: no table, no cost)."""
    if path is None:
        return None
    where = str(path)
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PriceTableError(f"{where}: no such price table") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise PriceTableError(f"{where}: not a TOML price table ({exc})") from None
    unknown = sorted(set(data) - {"currency", "models"})
    if unknown:
        raise PriceTableError(f"{where}: unknown key {unknown[0]!r}; the keys are currency and "
                              f"[models.\"NAME\"] tables with input and output")
    models = data.get("models", {})
    if not isinstance(models, Mapping) or not models:
        raise PriceTableError(f"{where}: no [models.\"NAME\"] table: nothing to price")
    prices = {str(name): _pair(where, str(name), entry) for name, entry in models.items()}
    currency = data.get("currency", "USD")
    if not isinstance(currency, str) or not currency.strip():
        raise PriceTableError(f"{where}: currency must be a short text such as \"USD\"")
    return PriceTable(prices, currency, where)


def _pair(where: str, name: str, entry: Any) -> tuple[float, float]:
    if not isinstance(entry, Mapping) or set(entry) != {"input", "output"}:
        raise PriceTableError(f"{where}: models.{name!r} needs exactly input and output (price "
                              f"per million tokens)")
    values = []
    for key in ("input", "output"):
        value = entry[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise PriceTableError(f"{where}: models.{name!r}.{key} must be a number >= 0, got "
                                  f"{value!r}")
        values.append(float(value))
    return values[0], values[1]
