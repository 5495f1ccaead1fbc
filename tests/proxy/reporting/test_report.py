from __future__ import annotations

import csv
import io
import json

from click.testing import CliRunner

from analyzer.cost import format_usd as usd
from proxy.cli import cli
from tests.support.request_records import records, write


def run(*args: str):
    return CliRunner().invoke(cli, ["report", *args], catch_exceptions=False)


def test_table_json_and_csv(tmp_path):
    path = str(tmp_path / "ledger.sqlite")
    write(path, records())
    table = run("--ledger", path, "--since", "2020-01-01")
    assert table.exit_code == 0, table.output
    assert (
        "cost summary" in table.output and "gpt-4o-mini" in table.output and "volatile-time" in table.output
    )
    # spent: 12 × $0.001 − 8 × 1024 × 1e-7 = $0.0111808, in cents from a cent up; saved
    # 8 × 1024 × 1e-7 = $0.0008192, 4 significant digits below a cent
    assert "│ spent" in table.output and "$0.01 │" in table.output and "$0.0008192" in table.output
    assert "private (unpriced)" in table.output and "billed nothing" in table.output
    assert max(len(line) for line in table.output.splitlines()) <= 80

    data = json.loads(run("--ledger", path, "--json").output)
    assert data["requests"] == 14 and abs(data["cost_usd"] - 0.0111808) < 1e-9
    assert data["unpriced"] == 1

    rows = list(csv.DictReader(io.StringIO(run("--ledger", path, "--csv").output)))
    assert {r["model"] for r in rows} == {
        "gpt-4o-mini",
        "private",
    }  # the request without usage billed nothing
    assert next(r for r in rows if r["model"] == "private")["cost_usd"] == ""  # unpriced: null, never 0


def test_since_filters(tmp_path):
    path = str(tmp_path / "ledger.sqlite")
    write(path, records())
    assert json.loads(run("--ledger", path, "--json", "--since", "1h").output)["requests"] == 0


def test_bad_input_is_a_clear_error(tmp_path):
    missing = run("--ledger", str(tmp_path / "nope.sqlite"))
    assert missing.exit_code == 2 and "no such file" in missing.output
    corrupt = tmp_path / "bad.sqlite"
    corrupt.write_bytes(b"garbage" * 500)
    result = run("--ledger", str(corrupt))
    assert result.exit_code == 2 and "not a database" in result.output
    result = run("--ledger", str(corrupt), "--since", "yesterday")
    assert result.exit_code == 2 and "--since" in result.output
    assert run("--ledger", str(corrupt), "--json", "--csv").exit_code == 2


def test_rewrites_are_printed_per_id(tmp_path):
    path = str(tmp_path / "ledger.sqlite")
    write(path, records())
    out = run("--ledger", path).output
    lines = [line for line in out.splitlines() if "breakpoints" in line or "rewritten requests" in line]
    assert [line.split() for line in lines] == [
        ["│", "rewritten", "requests", "│", "3", "│"],
        ["add-breakpoints", "3"],
        ["cap-breakpoints", "1"],
    ]
    data = json.loads(run("--ledger", path, "--json").output)
    assert data["rewrites"] == {"add-breakpoints": 3, "cap-breakpoints": 1} and data["rewritten"] == 3


def test_no_rewrite_table_when_nothing_was_rewritten(tmp_path):
    path = str(tmp_path / "ledger.sqlite")
    recs = records()
    for r in recs:
        r.rewrites = []
    write(path, recs)
    out = run("--ledger", path).output
    assert "rewritten requests" in out and "breakpoints" not in out and "rewrite " not in out


def test_every_shown_counter_is_in_the_totals_table(monkeypatch):
    from proxy.accounting.counters import COUNTERS, Counter
    from proxy.reporting import report_tables

    summary = {c.name: 7 if c.kind != "usd" else 1.5 for c in COUNTERS if c.shown}
    summary.update(token_hit_rate=0.5, request_hit_rate=0.25)
    rows = dict(report_tables.total_rows(summary))
    assert rows["spent"] == "$1.50" and rows["rewritten requests"] == "7"
    assert {c.name for c in COUNTERS if c.shown} <= report_tables.PLACED
    # a counter added to the table is printed (by its name, formatted by its kind) with no change to the report
    extra = Counter("tool_calls_usd", "0.0", "0.0", "usd", "A counter added later.")
    monkeypatch.setattr(report_tables, "COUNTERS", (*COUNTERS, extra))
    monkeypatch.setitem(report_tables.BY_NAME, extra.name, extra)
    assert report_tables.total_rows({**summary, "tool_calls_usd": 2.25})[-1] == ("tool calls usd", "$2.25")


def test_the_table_fits_80_columns_with_long_names_and_big_amounts(tmp_path):
    from analyzer.usage import Usage
    from proxy.accounting.records import RequestRecord

    path = str(tmp_path / "ledger.sqlite")
    long_name = "ft:gpt-4o-mini-2024-07-18:acme-corporation-support-assistant:billing-v7:Ab12Cd34"
    recs = records() + [
        RequestRecord(
            f"x{i}",
            1_700_000_000.0 + i,
            "t",
            "anthropic",
            "/v1/messages",
            model=long_name,
            status=200,
            analysed=True,
            usage=Usage(900_000_000, 800_000_000, 50_000_000, 0, 9_000_000),
            cost_usd=-123456.789 if i else 98765432.1,
            saved_usd=-12345678.9,
            missed_usd=1234567.89,
            miss_reason="volatile-request-id; path=system[0]; offset=12",
        )
        for i in range(3)
    ]
    recs += [
        RequestRecord(
            "g", 1_700_000_000.0, "t", "openai", "/v1/" + "very-long-route/" * 8, method="GET", status=404
        )
    ]
    write(path, recs)
    out = run("--ledger", path).output
    assert max(len(line) for line in out.splitlines()) <= 80, out
    data = json.loads(run("--ledger", path, "--json").output)
    assert usd(data["cost_usd"]) == "$98,518,518.53" and "$98,518,518.53" in out  # numbers never fold
    assert "-$37,037,036.70" in out and "$3,703,703.67" in out
    assert "ft:gpt-4o-mi" in out  # the long name folds inside its cell


def test_several_ledgers_read_as_one(tmp_path):
    import sqlite3

    a, b = str(tmp_path / "replica-a.sqlite"), str(tmp_path / "replica-b.sqlite")
    write(a, records())
    write(b, records())
    with sqlite3.connect(b) as db:  # an older replica's ledger: no upstream column
        db.execute("ALTER TABLE requests DROP COLUMN upstream")
    one = json.loads(run("--ledger", a, "--json").output)
    both = run("--ledger", a, "--ledger", b, "--json")
    assert both.exit_code == 0, both.output
    data = json.loads(both.output)
    assert data["requests"] == 2 * one["requests"] and abs(data["cost_usd"] - 2 * one["cost_usd"]) < 1e-9
    assert data["unpriced"] == 2 * one["unpriced"]
    missing = run("--ledger", a, "--ledger", str(tmp_path / "nope.sqlite"))
    assert missing.exit_code == 2 and "nope.sqlite" in missing.output
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    assert "not a prefixgate ledger" in run("--ledger", a, "--ledger", str(other)).output
