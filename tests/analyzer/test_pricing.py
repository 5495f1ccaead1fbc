from __future__ import annotations

import json

import pytest

from analyzer.pricing import BUNDLED, PriceFileError, PriceTable


@pytest.fixture(scope="module")
def table() -> PriceTable:
    return PriceTable.load()


def test_bundled_rows_have_source_date_and_provider(table):
    doc = json.loads(BUNDLED.read_text())
    assert doc["version"] and doc["updated"]
    assert len(table) == len(doc["models"]) >= 20
    for price in table:
        assert price.source.startswith("https://"), price.model
        assert len(price.date) == 10, price.model
        assert price.provider in {"openai", "anthropic", "deepseek", "google", "xai", "groq"}


def test_anthropic_rows_follow_the_cache_multipliers(table):
    for price in table:
        if price.provider != "anthropic" or price.model == "claude-3-haiku":  # Haiku 3: table says 1.2x write
            continue
        assert price.cache_read == pytest.approx(price.input * 0.1), price.model
        assert price.cache_write_5m == pytest.approx(price.input * 1.25), price.model
        assert price.cache_write_1h == pytest.approx(price.input * 2), price.model


def test_openai_cached_input_is_discounted(table):
    for price in table:
        if price.provider == "openai":
            assert 0 < price.cache_read < price.input, price.model
            assert price.cache_write_5m is None  # OpenAI bills writes as plain input


@pytest.mark.parametrize(
    "name, model",
    [
        ("gpt-4o-mini", "gpt-4o-mini"),
        ("gpt-4o", "gpt-4o"),
        ("GPT-4o", "gpt-4o"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-sonnet-4-20250514", "claude-sonnet-4-0"),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
        ("anthropic/claude-haiku-4-5", "claude-haiku-4-5"),
        ("claude-opus-4-6-20260101", "claude-opus-4-6"),
    ],
)
def test_lookup_exact_alias_and_snapshot(table, name, model):
    assert table.lookup(name).model == model


@pytest.mark.parametrize("name", ["gpt-4o-minix", "my-finetune", "", None, "gpt-4", "claude"])
def test_unknown_models_are_unpriced(table, name):
    assert table.lookup(name) is None


def test_override_file_merges_over_bundled(tmp_path):
    override = tmp_path / "prices.json"
    override.write_text(
        json.dumps(
            {
                "version": "team-1",
                "models": [
                    {
                        "provider": "openai",
                        "model": "gpt-4o",
                        "aliases": ["house-4o"],
                        "input": 1,
                        "output": 2,
                        "cache_read": 0.5,
                    },
                    {"provider": "local", "model": "llama-local", "input": 0.01, "output": 0.02},
                ],
            }
        )
    )
    table = PriceTable.load(str(override))
    assert table.lookup("gpt-4o").input == 1.0
    assert table.lookup("house-4o").model == "gpt-4o"
    assert table.lookup("gpt-4o-2024-08-06").input == 1.0
    assert table.lookup("llama-local").read_rate == 0.01  # no discount → reads bill as input
    assert table.lookup("gpt-4o-mini").input == 0.15  # untouched rows stay
    assert table.version.endswith("+team-1")


@pytest.mark.parametrize(
    "row, fragment",
    [
        ({"provider": "x", "model": "m1", "output": 1}, "models[1] (m1): field 'input' is missing"),
        (
            {"provider": "x", "model": "m1", "input": -1, "output": 1},
            "models[1] (m1): field 'input' must be a number",
        ),
        ({"provider": "x", "model": "m1", "input": "1.0", "output": 1}, "field 'input' must be a number"),
        (
            {"provider": "x", "model": "m1", "input": 1, "output": 1, "cache_read": True},
            "(m1): field 'cache_read'",
        ),
        ({"provider": "x", "input": 1, "output": 1}, "models[1]: field 'model'"),
        ({"provider": "x", "model": "m1", "input": 1, "output": 1, "aliases": "m"}, "(m1): field 'aliases'"),
        ("not a row", "models[1]: must be an object"),
    ],
)
def test_bad_row_names_row_and_field(tmp_path, row, fragment):
    path = tmp_path / "bad.json"
    good = {"provider": "x", "model": "m0", "input": 1, "output": 1}
    path.write_text(json.dumps({"models": [good, row]}))
    with pytest.raises(PriceFileError) as err:
        PriceTable.load(str(path))
    assert fragment in str(err.value)
    assert str(path) in str(err.value)


def test_unreadable_or_invalid_files(tmp_path):
    with pytest.raises(PriceFileError, match="cannot read"):
        PriceTable.load(str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(PriceFileError, match="not valid JSON"):
        PriceTable.load(str(bad))
    bad.write_text(json.dumps({"rows": []}))
    with pytest.raises(PriceFileError, match="'models' list"):
        PriceTable.load(str(bad))


def test_gpt_5_6_rows_bill_writes_at_1_25x_and_leave_12h_unpriced(table):
    for name in ("gpt-5.6-sol", "gpt-5.6-terra", "gpt-5.6-luna"):
        price = table.lookup(name)
        assert price.bills_writes, name
        assert price.cache_write_30m == pytest.approx(price.input * 1.25), name
        assert price.cache_read == pytest.approx(price.input * 0.1), name
        assert price.short_write_rate == price.cache_write_30m  # the default 30-minute TTL
        assert price.write_12h_rate is None  # unpublished: a 12-hour write prices the request null
    assert table.lookup("gpt-5.6").model == "gpt-5.6-sol"  # the alias
    assert table.lookup("gpt-6.2-sol").write_12h_rate == 5.0


def test_openai_rows_before_5_6_bill_no_writes(table):
    for name in ("gpt-5.5", "gpt-4o", "gpt-4o-mini", "gpt-4.1"):
        price = table.lookup(name)
        assert not price.bills_writes, name
        assert price.short_write_rate == price.input  # (never used: writes there are rules drift)
    assert (
        table.lookup("claude-sonnet-4-5").bills_writes
        and table.lookup("claude-sonnet-4-5").short_write_rate == 3.75
    )


def test_a_new_family_is_added_with_a_prices_file(tmp_path):
    # What README's "Adding a model family" shows: one row with the 30m / 12h write rates.
    override = tmp_path / "prices.json"
    override.write_text(
        json.dumps(
            {
                "version": "team-2",
                "models": [
                    {
                        "provider": "openai",
                        "model": "gpt-5.7-nova",
                        "aliases": ["gpt-5.7"],
                        "input": 3.0,
                        "output": 15.0,
                        "cache_read": 0.3,
                        "cache_write_30m": 3.75,
                        "cache_write_12h": 6.0,
                        "source": "https://example.test",
                        "date": "2027-01-01",
                    },
                ],
            }
        )
    )
    table = PriceTable.load(str(override))
    price = table.lookup("gpt-5.7")
    assert (price.model, price.short_write_rate, price.write_12h_rate, price.bills_writes) == (
        "gpt-5.7-nova",
        3.75,
        6.0,
        True,
    )
    assert table.lookup("gpt-5.7-nova-2027-01-15").model == "gpt-5.7-nova"  # dated snapshots inherit it
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {
                "models": [
                    {"provider": "openai", "model": "m", "input": 1, "output": 1, "cache_write_12h": "6"}
                ]
            }
        )
    )
    with pytest.raises(PriceFileError, match="cache_write_12h"):
        PriceTable.load(str(bad))
