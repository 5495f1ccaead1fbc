"""Per-model prices: a versioned data file, loaded and checked, looked up by model name.

``analyzer/prices.json`` (USD per 1M tokens; read, write per TTL, optional storage and label)
is merged with an optional ``--prices FILE``. Lookup: the exact name, an alias, then the name
without a provider prefix, snapshot suffix or ``-latest``; with a ``key`` (an upstream's
``prices`` key) that key's rows first. No row: None (unpriced). A bad row raises
:class:`PriceFileError` naming the file, the row and the field.

It does NOT do arithmetic on usage (see :mod:`analyzer.cost`), and prefixes of names never
match. See docs/money.md for the file format and lookup rules.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BUNDLED = Path(__file__).with_name("prices.json")
_SNAPSHOT = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|-latest)$")
_REQUIRED_NUMBERS = ("input", "output")
_OPTIONAL_NUMBERS = (
    "cache_read",
    "cache_write_5m",
    "cache_write_1h",
    "cache_storage",
    "cache_write_30m",
    "cache_write_12h",
)


class PriceFileError(ValueError):
    """A price file that cannot be used: unreadable, not JSON, or a bad row."""


@dataclass(frozen=True, slots=True)
class Price:
    model: str
    provider: str
    input: float
    output: float
    cache_read: float | None = None
    cache_write_5m: float | None = None
    cache_write_1h: float | None = None
    #: explicit caches' storage, USD per 1M tokens per hour (Gemini); None: not priced
    cache_storage: float | None = None
    source: str = ""
    date: str = ""
    #: shown beside the model where the rate is borrowed, e.g. "priced as gpt-4o-mini"
    label: str = ""
    #: OpenAI GPT-5.6+: writes with the default 30-minute TTL
    cache_write_30m: float | None = None
    #: OpenAI GPT-5.6+: writes with ``ttl: "12h"``; None: unpublished
    cache_write_12h: float | None = None

    @property
    def read_rate(self) -> float:
        """USD per 1M cached-read tokens (plain input when there is no discount)."""
        return self.input if self.cache_read is None else self.cache_read

    @property
    def bills_writes(self) -> bool:
        """The row prices cache writes (Anthropic, OpenAI 5.6+); False: writes are free."""
        return any(
            r is not None
            for r in (self.cache_write_5m, self.cache_write_1h, self.cache_write_30m, self.cache_write_12h)
        )

    @property
    def short_write_rate(self) -> float:
        """Writes with the provider's default TTL (OpenAI's 30m, else Anthropic's 5m; plain input when unpriced)."""
        for rate in (self.cache_write_30m, self.cache_write_5m):
            if rate is not None:
                return rate
        return self.input

    @property
    def write_1h_rate(self) -> float:
        return self.input if self.cache_write_1h is None else self.cache_write_1h

    @property
    def write_12h_rate(self) -> float | None:
        """None: 12-hour writes are not priced (a request that made some is unpriced)."""
        return self.cache_write_12h


def _number(row: dict[str, Any], name: str, where: str, *, required: bool) -> float | None:
    value = row.get(name)
    if value is None:
        if required:
            raise PriceFileError(f"{where}: field {name!r} is missing")
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        raise PriceFileError(f"{where}: field {name!r} must be a number >= 0, got {value!r}")
    return float(value)


def _text(row: dict[str, Any], name: str, where: str) -> str:
    value = row.get(name)
    if not isinstance(value, str) or not value.strip():
        raise PriceFileError(f"{where}: field {name!r} must be a non-empty string, got {value!r}")
    return value


def parse_row(row: Any, index: int, origin: str) -> tuple[Price, list[str]]:
    """One checked row → (Price, aliases); raises PriceFileError naming row and field."""
    name = row.get("model") if isinstance(row, dict) else None
    where = f"{origin}: models[{index}]" + (f" ({name})" if isinstance(name, str) else "")
    if not isinstance(row, dict):
        raise PriceFileError(f"{where}: must be an object, got {type(row).__name__}")
    model = _text(row, "model", where)
    provider = _text(row, "provider", where)
    aliases = row.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) and a for a in aliases):
        raise PriceFileError(f"{where}: field 'aliases' must be a list of names")
    numbers = {n: _number(row, n, where, required=True) for n in _REQUIRED_NUMBERS}
    numbers.update({n: _number(row, n, where, required=False) for n in _OPTIONAL_NUMBERS})
    source = row.get("source", "")
    date = row.get("date", "")
    label = row.get("label", "")
    if not isinstance(source, str) or not isinstance(date, str) or not isinstance(label, str):
        raise PriceFileError(f"{where}: fields 'source', 'date' and 'label' must be strings")
    price = Price(model=model, provider=provider, source=source, date=date, label=label, **numbers)  # type: ignore[arg-type]
    return price, aliases


def _read(path: Path) -> tuple[dict[str, Any], list[tuple[Price, list[str]]]]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PriceFileError(f"{path}: cannot read price file: {exc.strerror or exc}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise PriceFileError(f"{path}: not valid JSON: {exc}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("models"), list):
        raise PriceFileError(f"{path}: expected an object with a 'models' list")
    return doc, [parse_row(row, i, str(path)) for i, row in enumerate(doc["models"])]


class PriceTable:
    def __init__(self, rows: list[tuple[Price, list[str]]] | None = None, version: str = "") -> None:
        self.version = version
        self._by_name: dict[str, Price] = {}
        self._models: dict[str, Price] = {}
        #: provider (lowercase) → name or alias → row
        self._by_provider: dict[str, dict[str, Price]] = {}
        for price, aliases in rows or []:
            self.add(price, aliases)

    def add(self, price: Price, aliases: list[str] = ()) -> None:  # type: ignore[assignment]
        old = self._models.get(price.model.lower())
        if old is not None:  # an override replaces the row and the names pointing at it
            self._by_name = {k: v for k, v in self._by_name.items() if v is not old}
            self._by_provider = {
                p: {k: v for k, v in names.items() if v is not old} for p, names in self._by_provider.items()
            }
        self._models[price.model.lower()] = price
        self._by_name[price.model.lower()] = price
        names = self._by_provider.setdefault(price.provider.lower(), {})
        names[price.model.lower()] = price
        for alias in aliases:
            self._by_name[alias.lower()] = price
            names[alias.lower()] = price

    @classmethod
    def load(cls, path: str | None = None) -> PriceTable:
        """The bundled prices, with the rows of ``path`` (if given) merged over them."""
        doc, rows = _read(BUNDLED)
        table = cls(rows, version=str(doc.get("version", "")))
        if path:
            extra_doc, extra = _read(Path(path))
            for price, aliases in extra:
                table.add(price, aliases)
            table.version = f"{table.version}+{extra_doc.get('version', Path(path).name)}"
        return table

    def __len__(self) -> int:
        return len(self._models)

    def __iter__(self):
        return iter(self._models.values())

    def lookup(self, model: str | None, key: str | None = None) -> Price | None:
        """The model's row; with ``key`` (a price-table key), the rows under that key first."""
        if not model or not isinstance(model, str):
            return None
        name = model.strip().lower()
        if key:
            key = key.strip().lower()
            for candidate in _candidates(f"{key}/{name}"):
                price = self._by_name.get(candidate)
                if price is not None and (candidate.startswith(key + "/") or price.provider.lower() == key):
                    return price
            mine = self._by_provider.get(key, {})
            for candidate in _candidates(name):
                price = mine.get(candidate)
                if price is not None:
                    return price
        for candidate in _candidates(name):
            price = self._by_name.get(candidate)
            if price is not None:
                return price
        return None


def _candidates(name: str) -> list[str]:
    names = [name]
    if "/" in name:  # "anthropic/claude-…", "openai/gpt-4o"
        names.append(name.rsplit("/", 1)[1])
    for n in list(names):
        stripped = _SNAPSHOT.sub("", n)
        if stripped != n:
            names.append(stripped)
    return names
