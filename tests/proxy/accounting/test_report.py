from __future__ import annotations

import csv
import io
import json

from click.testing import CliRunner

from proxy.cli import cli
from tests.proxy.accounting.test_summary import records, write


def run(*args: str):
    return CliRunner().invoke(cli, ["report", *args], catch_exceptions=False)


def test_table_json_and_csv(tmp_path):
    path = str(tmp_path / "ledger.sqlite")
    write(path, records())
    table = run("--ledger", path, "--since", "2020-01-01")
    assert table.exit_code == 0, table.output
    assert "cost summary" in table.output and "gpt-4o-mini" in table.output and "volatile-time" in table.output
    assert "$0.0112" in table.output  # spent: 12 × $0.001 − 8 × 1024 × 1e-7 = $0.0111808

    data = json.loads(run("--ledger", path, "--json").output)
    assert data["requests"] == 14 and abs(data["cost_usd"] - 0.0111808) < 1e-9
    assert data["unpriced"] == 1

    rows = list(csv.DictReader(io.StringIO(run("--ledger", path, "--csv").output)))
    assert {r["model"] for r in rows} == {"gpt-4o-mini", "private", ""}
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
