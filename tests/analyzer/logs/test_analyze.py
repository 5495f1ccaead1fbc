"""`prefixgate analyze` on generated logs and a real SQLite ledger: repeated prefixes,
allowed vs realised hit rate (TTL, minimum, 128-token steps), money, forks and advice."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzer.logs.analysis import LogAnalysis
from analyzer.logs.cli import analyze_command, run_analysis
from analyzer.logs.config import AnalyzeConfig
from analyzer.logs.reader import LogRecord
from analyzer.prefix import chain, root_hash
from analyzer.pricing import PriceTable
from analyzer.segments import segments_for
from analyzer.tokens import estimate_tokens

STATIC = " ".join(
    f"Rule {i}: answer politely, cite the policy section and never promise refunds beyond 30 days."
    for i in range(80)
)


def body(system: str, user: str, model: str = "gpt-4o") -> dict:
    return {
        "model": model,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
    }


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def openai_allowed(nbytes: int) -> int:
    """OpenAI's rule, written out: nothing under 1,024 tokens, then 1,024 + k·128."""
    tokens = -(-nbytes // 4)
    return 0 if tokens < 1024 else 1024 + (tokens - 1024) // 128 * 128


def prefix_bytes(b: dict, n: int) -> int:
    segs = segments_for("openai", "/v1/chat/completions", b)
    return chain(segs, root_hash("openai", b["model"])).bytes_at(n)


def test_timestamp_fork_is_located_counted_and_advised(tmp_path):
    head = "You are Acme's support assistant. Current time: "
    records = [body(f"{head}10:{i:02d}:00 UTC. {STATIC}", f"question {i}") for i in range(20)]
    summary, errors = run_analysis([str(write_jsonl(tmp_path / "log.jsonl", records))], AnalyzeConfig())
    assert errors == []
    fork = summary["forks"][0]
    assert fork["field"] == "messages[0].content" and fork["kind"] == "time" and fork["where"] == "head"
    assert fork["offset"] == len(head) and fork["count"] == 19
    assert summary["hit_rate"]["allowed"] == 0  # nothing repeats before the timestamp's segment ends
    assert any(
        f"messages[0].content offset {len(head):,} forks 95% of requests" in a for a in summary["advice"]
    )


def test_allowed_vs_realised_hit_rate_and_money(tmp_path):
    records = [
        {
            "request": body(STATIC, f"question {i}"),
            "response": {
                "usage": {
                    "prompt_tokens": 2000,
                    "completion_tokens": 10,
                    "prompt_tokens_details": {"cached_tokens": 0},
                }
            },
        }
        for i in range(10)
    ]
    table = PriceTable.load()
    summary, _ = run_analysis(
        [str(write_jsonl(tmp_path / "log.jsonl", records))], AnalyzeConfig(prices=table)
    )
    allowed_each = openai_allowed(prefix_bytes(records[0]["request"], 1))
    assert allowed_each > 0
    assert summary["hit_rate"]["realized"] == 0
    assert summary["hit_rate"]["allowed"] == pytest.approx(9 * allowed_each / (10 * 2000))
    price = table.lookup("gpt-4o")
    assert summary["money"]["missed_usd"] == pytest.approx(
        9 * allowed_each * (price.input - price.read_rate) / 1e6
    )
    assert summary["money"]["spent_usd"] == pytest.approx(10 * (2000 * price.input + 10 * price.output) / 1e6)
    top = summary["top_prefixes"][0]
    assert (
        top["count"] == 10
        and top["ends_at"] == "messages[0]"
        and top["tokens"] == estimate_tokens(prefix_bytes(records[0]["request"], 1))
    )
    assert any("allow" in a and "could be saved" in a for a in summary["advice"])


def test_ttl_decides_whether_a_repeat_counts(tmp_path):
    records = [{"ts": 1_700_000_000 + 600 * i, "request": body(STATIC, f"q{i}")} for i in range(4)]
    path = str(write_jsonl(tmp_path / "log.jsonl", records))
    short, _ = run_analysis([path], AnalyzeConfig(ttl_openai=300))
    long, _ = run_analysis([path], AnalyzeConfig(ttl_openai=3600))
    assert short["hit_rate"]["allowed"] == 0 and short["expired_repeats"] == 3
    assert long["hit_rate"]["allowed"] > 0 and long["expired_repeats"] == 0


def test_prefix_below_minimum_is_not_allowed(tmp_path):
    records = [body("You are brief. " * 20, f"q{i}") for i in range(5)]
    summary, _ = run_analysis([str(write_jsonl(tmp_path / "log.jsonl", records))], AnalyzeConfig())
    assert summary["hit_rate"]["allowed"] == 0 and summary["below_minimum"] == 4


def test_anthropic_repeats_without_breakpoint_are_advised(tmp_path):
    records = [
        {
            "model": "claude-sonnet-4-5",
            "max_tokens": 100,
            "system": STATIC,
            "messages": [{"role": "user", "content": f"q{i}"}],
        }
        for i in range(3)
    ]
    summary, _ = run_analysis([str(write_jsonl(tmp_path / "log.jsonl", records))], AnalyzeConfig())
    assert any("no cache_control breakpoint" in a for a in summary["advice"])
    assert summary["hit_rate"]["by_provider"]["anthropic"]["allowed"] > 0


def test_conversation_turns_are_extensions_not_forks(tmp_path):
    msgs = [{"role": "system", "content": STATIC}]
    records = []
    for i in range(4):
        msgs = msgs + [{"role": "user", "content": f"turn {i}"}]
        records.append({"model": "gpt-4o", "messages": list(msgs)})
        msgs = msgs + [{"role": "assistant", "content": f"answer {i}"}]
    summary, _ = run_analysis([str(write_jsonl(tmp_path / "log.jsonl", records))], AnalyzeConfig())
    assert summary["forks"] == [] and summary["forked_requests"] == 0


def make_ledger(path: Path, rows: list[dict]) -> None:
    conn = sqlite3.connect(path)
    conn.execute("""CREATE TABLE requests (id INTEGER PRIMARY KEY, request_id TEXT, ts REAL, tenant TEXT, provider TEXT, model TEXT,
        route TEXT, status INTEGER, stream INTEGER, latency_ms REAL, ttfb_ms REAL, analysed INTEGER, input_tokens INTEGER,
        cached_tokens INTEGER, cache_write_tokens INTEGER, cache_write_1h_tokens INTEGER, output_tokens INTEGER, cost_usd REAL,
        saved_usd REAL, missed_usd REAL, prefix_segments INTEGER, prefix_bytes INTEGER, total_segments INTEGER, total_bytes INTEGER,
        miss_reason TEXT, rewrites TEXT, error TEXT, chain TEXT, body BLOB)""")
    for r in rows:
        conn.execute(
            f"INSERT INTO requests ({', '.join(r)}) VALUES ({', '.join('?' for _ in r)})", list(r.values())
        )
    conn.commit()
    conn.close()


def test_ledger_with_bodies_and_chains(tmp_path):
    rows = []
    for i in range(6):
        b = body(STATIC, f"q{i}")
        segs = segments_for("openai", "/v1/chat/completions", b)
        ch = chain(segs, root_hash("openai", "gpt-4o"))
        row = {
            "ts": 1_700_000_000 + i,
            "provider": "openai",
            "model": "gpt-4o",
            "route": "/v1/chat/completions",
            "analysed": 1,
            "input_tokens": 1500,
            "cached_tokens": 1024 if i else 0,
            "cache_write_tokens": 0,
            "cache_write_1h_tokens": 0,
            "output_tokens": 5,
            "total_bytes": ch.ends[-1],
            "chain": ",".join(h[:8].hex() for h in ch.hashes),
            "prefix_segments": 1 if i else 0,
            "prefix_bytes": ch.ends[0] if i else 0,
        }
        if i % 2 == 0:
            row["body"] = json.dumps(b).encode()
        rows.append(row)
    db = tmp_path / "ledger.sqlite"
    make_ledger(db, rows)
    summary, errors = run_analysis([str(db)], AnalyzeConfig())
    assert errors == [] and summary["analysed"] == 6 and summary["requests_with_usage"] == 6
    assert summary["hit_rate"]["realized"] == pytest.approx(5 * 1024 / (6 * 1500))
    assert summary["top_prefixes"][0]["count"] == 6  # rows with and without bodies land on the same nodes


def test_not_a_ledger_is_an_input_error(tmp_path):
    db = tmp_path / "x.db"
    sqlite3.connect(db).execute("CREATE TABLE other (a)").connection.commit()
    _, errors = run_analysis([str(db)], AnalyzeConfig())
    assert errors and "not a prefixgate ledger" in errors[0]


def test_cli_bad_lines_named_rest_analysed_exit_2_and_json(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text(
        json.dumps(body(STATIC, "a"))
        + "\n{broken\n"
        + json.dumps({"foo": 1})
        + "\n"
        + json.dumps(body(STATIC, "b"))
        + "\n"
    )
    result = CliRunner().invoke(analyze_command, [str(path), "--json", "--no-prices"])
    assert result.exit_code == 2
    summary = json.loads(result.stdout)
    assert summary["analysed"] == 2 and summary["input_errors"] == 2
    assert f"{path}:2: line is not JSON" in result.stderr and f"{path}:3: no request body" in result.stderr
    assert "Traceback" not in result.output
    text = CliRunner().invoke(analyze_command, [str(tmp_path / "none.jsonl")])
    assert text.exit_code == 2 and "no such file" in text.stderr


def test_cli_text_report_with_progress(tmp_path):
    path = write_jsonl(tmp_path / "log.jsonl", [body(STATIC, f"q{i}") for i in range(3)])
    result = CliRunner().invoke(analyze_command, [str(path), "--progress"])
    assert result.exit_code == 0, result.output
    assert "top repeated prefixes" in result.stdout and "allowed by the providers' rules" in result.stdout


def test_tree_memory_is_bounded():
    analysis = LogAnalysis(AnalyzeConfig(max_nodes=1000))
    for i in range(3000):
        b = body(f"unique system {i}", "q")
        analysis.add(LogRecord("mem", i, "openai", "/v1/chat/completions", "gpt-4o", None, b, None))
    assert len(analysis.tree) <= 1000 and analysis.tree.pruned > 0


def test_config_is_validated():
    with pytest.raises(ValueError):
        AnalyzeConfig(ttl_openai=0)
    with pytest.raises(ValueError):
        AnalyzeConfig(top=0)


def test_ledger_written_with_the_proxy_schema_is_read(tmp_path):
    from proxy.accounting.ledger_schema import open_ledger

    path = tmp_path / "ledger"  # no suffix: recognised by SQLite's header
    conn = open_ledger(str(path))
    for i in range(3):
        b = body(STATIC, f"q{i}")
        conn.execute(
            "INSERT INTO requests (ts, provider, model, route, analysed, input_tokens, cached_tokens, cache_write_tokens,"
            " cache_write_1h_tokens, output_tokens, body) VALUES (?, 'openai', 'gpt-4o', '/v1/chat/completions', 1, 1500, ?, 0, 0, 3, ?)",
            (1_700_000_000 + i, 1024 if i else 0, json.dumps(b).encode()),
        )
    conn.commit()
    conn.close()
    summary, errors = run_analysis([str(path)], AnalyzeConfig())
    assert errors == [] and summary["analysed"] == 3 and summary["top_prefixes"][0]["count"] == 3


def test_anthropic_one_hour_breakpoints_outlive_the_default_ttl(tmp_path):
    def rec(i: int, ttl: str | None) -> dict:
        cc = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
        return {
            "ts": 1_700_000_000 + 1200 * i,
            "request": {
                "model": "claude-sonnet-4-5",
                "max_tokens": 10,
                "system": [{"type": "text", "text": STATIC, "cache_control": cc}],
                "messages": [{"role": "user", "content": f"q{i}"}],
            },
        }

    five = run_analysis(
        [str(write_jsonl(tmp_path / "a.jsonl", [rec(i, None) for i in range(3)]))], AnalyzeConfig()
    )[0]
    hour = run_analysis(
        [str(write_jsonl(tmp_path / "b.jsonl", [rec(i, "1h") for i in range(3)]))], AnalyzeConfig()
    )[0]
    assert five["hit_rate"]["allowed"] == 0 and hour["hit_rate"]["allowed"] > 0


def test_ledger_rows_without_bodies_use_the_stated_prefix_size(tmp_path):
    """A ledger without --log-bodies states only the total and the repeated prefix's bytes;
    the prefix's end must come from prefix_bytes, not an even split of the total."""
    from analyzer.logs.reader import ledger_ends

    assert ledger_ends(2, 8000, 1, 7900) == [7900, 8000]
    assert ledger_ends(3, 900, 0, 0) == [300, 600, 900]
    assert ledger_ends(4, 1000, 2, 800) == [400, 800, 900, 1000]
    rows = []
    for i in range(4):
        b = body(STATIC, f"question {i}")
        segs = segments_for("openai", "/v1/chat/completions", b)
        ch = chain(segs, root_hash("openai", "gpt-4o"))
        rows.append(
            {
                "ts": 1_700_000_000 + i,
                "provider": "openai",
                "model": "gpt-4o",
                "route": "/v1/chat/completions",
                "analysed": 1,
                "input_tokens": estimate_tokens(ch.ends[-1]),
                "cached_tokens": 0,
                "cache_write_tokens": 0,
                "cache_write_1h_tokens": 0,
                "output_tokens": 5,
                "total_bytes": ch.ends[-1],
                "total_segments": 2,
                "prefix_segments": 1 if i else 0,
                "prefix_bytes": ch.ends[0] if i else 0,
                "chain": ",".join(h[:8].hex() for h in ch.hashes),
            }
        )
    db = tmp_path / "ledger.sqlite"
    make_ledger(db, rows)
    summary, errors = run_analysis([str(db)], AnalyzeConfig(prices=None))
    system_bytes = rows[1]["prefix_bytes"]
    assert errors == [] and summary["top_prefixes"][0]["tokens"] == estimate_tokens(system_bytes)
    allowed = 3 * openai_allowed(system_bytes)
    assert allowed > 0 and summary["hit_rate"]["allowed"] == pytest.approx(
        allowed / sum(r["input_tokens"] for r in rows)
    )
    assert summary["money"]["spent_usd"] is None  # no price table: unknown, never $0


def test_money_is_null_when_no_request_carries_usage(tmp_path):
    path = write_jsonl(tmp_path / "log.jsonl", [body(STATIC, f"q{i}") for i in range(3)])
    summary, _ = run_analysis([str(path)], AnalyzeConfig(prices=PriceTable.load()))
    assert (
        summary["money"]["priced"]
        and summary["money"]["spent_usd"] is None
        and summary["money"]["saved_usd"] is None
    )
    assert summary["money"]["missed_usd"] > 0
    text = CliRunner().invoke(analyze_command, [str(path)]).stdout
    assert "spent and saved n/a" in text and "$0.00, saved" not in text


def test_a_binary_file_or_directory_is_named_without_flooding_stderr(tmp_path):
    junk = tmp_path / "junk.jsonl"
    junk.write_bytes(b"\xff\xfe\x00garbage\n" * 100)
    result = CliRunner().invoke(analyze_command, [str(junk), str(tmp_path), "--no-prices"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert (
        len(lines) == 22
        and "80 more unreadable line(s)" in result.stderr
        and "is a directory" in result.stderr
    )


def test_the_reader_takes_the_ledger_columns_from_the_one_list():
    from analyzer.logs import ledger_columns, reader

    assert reader.COLUMNS is ledger_columns.COLUMNS and not hasattr(reader, "LEDGER_COLUMNS")


def test_realised_never_exceeds_allowed(tmp_path):
    # The provider kept the prefix longer than analyze's conservative 5-minute TTL and its
    # tokenizer counted more than bytes / 4: it reported more cached tokens than the
    # estimate allows. What was cached was allowed.
    records = [
        {
            "ts": 1_700_000_000 + 400 * i,
            "request": body(STATIC, f"q{i}"),
            "response": {
                "usage": {
                    "prompt_tokens": 2400,
                    "completion_tokens": 5,
                    "prompt_tokens_details": {"cached_tokens": 2304 if i else 0},
                }
            },
        }
        for i in range(4)
    ]
    summary, _ = run_analysis([str(write_jsonl(tmp_path / "log.jsonl", records))], AnalyzeConfig())
    hr = summary["hit_rate"]
    assert hr["realized"] == pytest.approx(3 * 2304 / (4 * 2400))
    assert (
        hr["allowed"] >= hr["realized"]
        and hr["by_provider"]["openai"]["allowed"] >= hr["by_provider"]["openai"]["realized"]
    )
    assert summary["expired_repeats"] == 3  # by the configured TTL; yet the cache served them


def test_rows_without_prefix_information_are_counted_apart(tmp_path):
    """After a store outage the proxy wrote rows with prefix_segments NULL: their prefix sizes
    are unknown, so they are neither misses nor "shorter than the minimum"."""

    def rows(unknown_as):
        out = []
        for i in range(12):  # the system prompt repeats; five short turns differ per request
            b = {
                "model": "gpt-4o",
                "messages": [
                    {"role": "system", "content": STATIC},
                    *({"role": "user", "content": f"turn {k} of {i}"} for k in range(5)),
                ],
            }
            ch = chain(segments_for("openai", "/v1/chat/completions", b), root_hash("openai", "gpt-4o"))
            known = i >= 10  # the store was down for the first ten requests
            out.append(
                {
                    "ts": 1_700_000_000 + i,
                    "provider": "openai",
                    "model": "gpt-4o",
                    "route": "/v1/chat/completions",
                    "analysed": 1,
                    "input_tokens": 2000,
                    "cached_tokens": 1920 if known else 0,
                    "cache_write_tokens": 0,
                    "cache_write_1h_tokens": 0,
                    "output_tokens": 5,
                    "total_bytes": ch.ends[-1],
                    "prefix_segments": 1 if known else unknown_as,
                    "prefix_bytes": ch.ends[0] if known else unknown_as,
                    "chain": ",".join(h[:8].hex() for h in ch.hashes),
                }
            )
        return out

    # Read as if the sizes were known, the rows' six evenly spread segments make the system
    # prompt look shorter than 1,024 tokens: the advice the issue saw.
    make_ledger(tmp_path / "guess.sqlite", rows(0))
    assert run_analysis([str(tmp_path / "guess.sqlite")], AnalyzeConfig())[0]["below_minimum"] == 9
    db = tmp_path / "ledger.sqlite"
    make_ledger(db, rows(None))
    summary, errors = run_analysis([str(db)], AnalyzeConfig())
    assert errors == [] and summary["prefix_unknown"] == 10 and summary["analysed"] == 12
    assert summary["below_minimum"] == 0 and not any("minimum" in a for a in summary["advice"])
    assert summary["hit_rate"]["realized"] == pytest.approx(1920 / 2000)  # the two known rows only
    assert summary["hit_rate"]["allowed"] >= summary["hit_rate"]["realized"]
    text = CliRunner().invoke(analyze_command, [str(db)]).stdout
    assert "10 without prefix information" in text


def test_a_timestamp_in_the_system_prompt_is_missed_money_as_the_proxy_counts_it(tmp_path):
    """tests/analyzer/test_missed.py's OpenAI worked example, from a JSONL log: $0.0001344."""
    billing = "You are the billing assistant for ACME; answer in one short paragraph. " * 100
    usage = {"prompt_tokens": 1830, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 0}}
    records = [
        {
            "ts": 1_700_000_000 + t,
            "request": {
                "model": "gpt-4o-mini",
                "messages": [
                    {"role": "system", "content": f"Current time: {ts}. {billing}"},
                    {"role": "user", "content": q},
                ],
            },
            "response": {"usage": usage},
        }
        for t, ts, q in (
            (0, "2026-11-30T10:00:01Z", "What is my balance?"),
            (298, "2026-11-30T10:04:59Z", "When is my invoice due?"),
        )
    ]
    summary, _ = run_analysis(
        [str(write_jsonl(tmp_path / "log.jsonl", records))], AnalyzeConfig(prices=PriceTable.load())
    )
    assert abs(summary["money"]["missed_usd"] - 0.0001344) < 1e-9  # 1,792 tokens × (0.15 − 0.075) / 1M
    assert summary["forks"][0]["kind"] == "time"
    assert (
        summary["money"]["missed_volatile_usd"] == summary["money"]["missed_usd"]
    )  # all of it behind the time
    text = CliRunner().invoke(analyze_command, [str(tmp_path / "log.jsonl")]).stdout
    assert "missed savings $0.0001344" in text and "but for such values missed $0.0001344" in text


def test_a_ledger_the_proxy_priced_brings_its_own_money(tmp_path):
    rows = [
        {
            "ts": 1_700_000_000 + i,
            "provider": "openai",
            "model": "gpt-4o",
            "route": "/v1/chat/completions",
            "analysed": 1,
            "input_tokens": 1500,
            "cached_tokens": 0,
            "cache_write_tokens": 0,
            "cache_write_1h_tokens": 0,
            "output_tokens": 5,
            "total_bytes": 6000,
            "prefix_segments": 0,
            "prefix_bytes": 0,
            "chain": f"{i:016x}",
            "cost_usd": 0.25,
            "saved_usd": -0.125,
            "missed_usd": 0.0625 if i else None,
        }
        for i in range(3)
    ]
    db = tmp_path / "ledger.sqlite"
    make_ledger(db, rows)
    money = run_analysis([str(db)], AnalyzeConfig(prices=PriceTable.load()))[0]["money"]
    assert (money["spent_usd"], money["saved_usd"], money["missed_usd"]) == (0.75, -0.375, 0.125)


def test_progress_counts_ledger_rows(tmp_path, monkeypatch):
    from analyzer.logs import cli

    rows = [
        {
            "ts": 1_700_000_000 + i,
            "provider": "openai",
            "model": "gpt-4o",
            "route": "/v1/chat/completions",
            "analysed": 1,
            "total_bytes": 100,
            "prefix_segments": 0,
            "prefix_bytes": 0,
            "chain": f"{i:016x}",
        }
        for i in range(600)
    ]
    db = tmp_path / "ledger.sqlite"
    make_ledger(db, rows)
    seen: list[tuple] = []

    class Recorder:
        def __init__(self, *a, **k):
            pass

        def start(self):
            seen.append(("start",))

        def stop(self):
            seen.append(("stop",))

        def add_task(self, name, total, done):
            seen.append(("task", name, total, done))
            return 1

        def update(self, task, completed, done):
            seen.append(("update", completed, done))

    monkeypatch.setattr(cli, "_progress", lambda enabled: Recorder() if enabled else None)
    run_analysis([str(db)], AnalyzeConfig(), show_progress=True)
    assert (
        seen[0] == ("start",)
        and seen[1] == ("task", "ledger.sqlite", 600, "0/600 rows")
        and seen[-1] == ("stop",)
    )
    assert ("update", 512, "512/600 rows") in seen
    seen.clear()
    run_analysis([str(db)], AnalyzeConfig(), show_progress=False)
    assert seen == []
    piped = CliRunner().invoke(analyze_command, [str(db), "--no-prices"])  # stderr is not a terminal: no bar
    assert piped.exit_code == 0 and piped.stderr == ""


# --- GPT-5.6 writes, 12-hour writes, rules drift and flags in ledgers and logs -----------------------------


def proxy_ledger(path: Path, records) -> None:
    """``records`` written as the proxy writes them (proxy.accounting.ledger_schema.row_for)."""
    from proxy.accounting.ledger_schema import INSERT, open_ledger, row_for

    conn = open_ledger(str(path))
    for r in records:
        conn.execute(INSERT, row_for(r, log_bodies=False))
    conn.commit()
    conn.close()


def test_the_reader_keeps_12h_writes_flags_and_drift_of_a_ledger_row(tmp_path):
    from analyzer.logs.reader import read_ledger
    from analyzer.usage import Usage
    from proxy.accounting.records import RequestRecord

    def rec(i: int, usage: Usage, **kw) -> RequestRecord:
        return RequestRecord(
            f"r{i}",
            1_800_000_000.0 + i,
            "t",
            "openai",
            "/v1/responses",
            model="gpt-6.2-sol",
            status=200,
            analysed=True,
            usage=usage,
            chain=[f"{i:016x}"],
            total_bytes=4000,
            **kw,
        )

    db = tmp_path / "ledger.sqlite"
    proxy_ledger(
        db,
        [
            rec(0, Usage(10_000, 4000, 5000, 0, 200, cache_write_12h_tokens=4000)),
            rec(1, Usage(3000, 0, 2000, 0, 5), drift=["cache_write_tokens:not_billed_by_price_row"]),
            rec(2, Usage(3000, 0, 2000, 0, 5), flags=["cache_write_tokens:ttl_split_unknown"]),
            rec(3, Usage(10, 0, 0, 0, 10**9, flags=("usage.output_tokens:too_large",))),
        ],
    )
    got = [r.usage for r in read_ledger(str(db), lambda *a: pytest.fail(str(a)))]
    assert (got[0].cache_write_tokens, got[0].cache_write_12h_tokens, got[0].cache_write_short_tokens) == (
        5000,
        4000,
        1000,
    )
    assert got[1].drift == () and got[1].flags == ()  # depends on the prices: analyze checks it again (below)
    assert got[2].flags == ("cache_write_tokens:ttl_split_unknown",) and got[2].drift == ()
    assert got[3].flags == ("usage.output_tokens:too_large",)


def test_analyze_prices_gpt_5_6_writes_and_keeps_drift_and_flags_null(tmp_path):
    from analyzer.usage import Usage
    from proxy.accounting.records import RequestRecord

    def rec(i: int, model: str, usage: Usage, route: str = "/v1/chat/completions", **kw) -> RequestRecord:
        # cost_usd NULL: the proxy ran without these price rows; analyze prices them with its own
        return RequestRecord(
            f"r{i}",
            1_800_000_000.0 + i,
            "t",
            "openai",
            route,
            model=model,
            status=200,
            analysed=True,
            usage=usage,
            chain=[f"{i:016x}"],
            total_bytes=4000,
            prefix_segments=0,
            prefix_bytes=0,
            **kw,
        )

    db = tmp_path / "ledger.sqlite"
    proxy_ledger(
        db,
        [
            rec(
                0, "gpt-5.6-terra", Usage(6000, 2048, 3000, 0, 400)
            ),  # $0.0146136 (tests/analyzer/test_cost.py)
            rec(
                1,
                "gpt-6.2-sol",
                Usage(10_000, 4000, 5000, 0, 200, cache_write_12h_tokens=4000),
                route="/v1/responses",
            ),  # $0.0269
            rec(
                2,
                "gpt-5.6-sol",
                Usage(3000, 0, 2000, 0, 5, cache_write_12h_tokens=2000),
                route="/v1/responses",
            ),  # 12h unpublished
            rec(
                3, "gpt-5.5", Usage(3000, 0, 2000, 0, 5), drift=["cache_write_tokens:not_billed_by_price_row"]
            ),
            rec(
                4, "gpt-5.6-terra", Usage(6000, 0, 3000, 0, 4), flags=["cache_write_tokens:ttl_split_unknown"]
            ),
        ],
    )
    summary, errors = run_analysis([str(db)], AnalyzeConfig(prices=PriceTable.load()))
    assert errors == []
    money = summary["money"]
    assert abs(money["spent_usd"] - (0.0146136 + 0.0269)) < 1e-9
    # saved: (16800 − 14613.6) + (10000*2 + 2000 − 26900) per 1M = 2186.4 − 4900
    assert abs(money["saved_usd"] - (0.0021864 - 0.0049)) < 1e-9
    assert summary["rules_drift"] == {
        "requests": 1,
        "by_field": [
            {"model": "gpt-5.5", "note": "cache_write_tokens:not_billed_by_price_row", "requests": 1}
        ],
    }
    assert money["flagged_requests"] == 1 and money["unpriced_requests"] == 0
    from analyzer.logs.report import render

    assert "rules drift: 1 request(s)" in render(summary)
    # the rules fixed with a --prices file that bills gpt-5.5's writes: that row is priced now
    fixed = tmp_path / "prices.json"
    fixed.write_text(
        json.dumps(
            {
                "models": [
                    {
                        "provider": "openai",
                        "model": "gpt-5.5",
                        "input": 1.0,
                        "output": 2.0,
                        "cache_read": 0.1,
                        "cache_write_30m": 1.25,
                    }
                ]
            }
        )
    )
    again = run_analysis([str(db)], AnalyzeConfig(prices=PriceTable.load(str(fixed))))[0]
    # + 1000*1 + 2000*1.25 + 5*2 = 3510 per 1M
    assert (
        again["rules_drift"]["requests"] == 0
        and abs(again["money"]["spent_usd"] - (0.0146136 + 0.0269 + 0.00351)) < 1e-9
    )


def test_a_jsonl_log_of_gpt_5_6_usage_is_priced_and_drift_is_not(tmp_path):
    usage_56 = {
        "prompt_tokens": 6000,
        "completion_tokens": 400,
        "prompt_tokens_details": {"cached_tokens": 2048, "cache_write_tokens": 3000},
    }
    records = [
        {"request": body(STATIC, "q0", model="gpt-5.6-terra"), "response": {"usage": usage_56}},
        {
            "request": body(STATIC, "q1", model="gpt-5.5"),
            "response": {"usage": usage_56},
        },  # writes the rules do not expect
        {
            "request": body(STATIC, "q2", model="gpt-5.6-terra"),
            "response": {
                "usage": {**usage_56, "prompt_tokens_details": {"cached_tokens": 0, "cache_bonus_tokens": 1}}
            },
        },
    ]
    summary, errors = run_analysis(
        [str(write_jsonl(tmp_path / "log.jsonl", records))], AnalyzeConfig(prices=PriceTable.load())
    )
    assert errors == []
    assert abs(summary["money"]["spent_usd"] - 0.0146136) < 1e-9
    assert summary["rules_drift"]["requests"] == 2
    assert {d["note"] for d in summary["rules_drift"]["by_field"]} == {
        "cache_write_tokens:not_billed_by_price_row",
        "prompt_tokens_details.cache_bonus_tokens:unknown_field",
    }


def test_gpt_5_6_repeats_count_within_its_30_minute_ttl(tmp_path):
    # Twenty minutes apart: past OpenAI's 5–10 minutes before 5.6, inside GPT-5.6's 30 minutes.
    def run(model: str):
        records = [
            {"request": body(STATIC, f"q{i}", model=model), "ts": 1_800_000_000 + i * 1200} for i in range(3)
        ]
        return run_analysis([str(write_jsonl(tmp_path / f"{model}.jsonl", records))], AnalyzeConfig())[0]

    assert run("gpt-4o")["hit_rate"]["allowed"] == 0
    assert run("gpt-5.6-terra")["hit_rate"]["allowed"] > 0


def test_a_chat_request_with_a_12h_breakpoint_and_writes_is_priced_null(tmp_path):
    usage = {
        "prompt_tokens": 6000,
        "completion_tokens": 400,
        "prompt_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 3000},
    }
    marked = {
        "model": "gpt-5.6-terra",
        "messages": [
            {
                "role": "system",
                "content": [
                    {
                        "type": "text",
                        "text": STATIC,
                        "prompt_cache_breakpoint": {"mode": "explicit", "ttl": "12h"},
                    }
                ],
            },
            {"role": "user", "content": "q"},
        ],
    }
    records = [
        {"request": marked, "response": {"usage": usage}},
        {"request": body(STATIC, "q1", model="gpt-5.6-terra"), "response": {"usage": usage}},
    ]
    summary, errors = run_analysis(
        [str(write_jsonl(tmp_path / "log.jsonl", records))], AnalyzeConfig(prices=PriceTable.load())
    )
    assert errors == [] and summary["money"]["flagged_requests"] == 1
    # only the unmarked one: 3000*2 + 3000*2.5 + 400*12 = 18300 per 1M
    assert abs(summary["money"]["spent_usd"] - 0.0183) < 1e-9


def test_missed_savings_agree_with_the_proxy_on_rows_that_billed_nothing(tmp_path):
    """Rows the upstream refused (429, no usage) billed nothing: the proxy's missed savings for
    them are null, and analyze must not find money there the dashboard does not show."""
    import sqlite3

    from proxy.accounting.records import RequestRecord
    from proxy.reporting.summary import summarize

    b = body(STATIC, "q")
    ch = chain(segments_for("openai", "/v1/chat/completions", b), root_hash("openai", "gpt-4o"))
    refused = [
        RequestRecord(
            f"r{i}",
            1_800_000_000.0 + i,
            "t",
            "openai",
            "/v1/chat/completions",
            model="gpt-4o",
            status=429,
            analysed=True,
            usage=None,
            chain=[h[:8].hex() for h in ch.hashes],
            total_segments=len(ch.hashes),
            total_bytes=ch.ends[-1],
            prefix_segments=1 if i else 0,
            prefix_bytes=ch.ends[0] if i else 0,
        )
        for i in range(4)
    ]
    db = tmp_path / "ledger.sqlite"
    proxy_ledger(db, refused)
    dashboard = summarize(sqlite3.connect(db))
    analysed, errors = run_analysis([str(db)], AnalyzeConfig(prices=PriceTable.load()))
    assert errors == [] and dashboard["missed_usd"] == 0.0
    assert analysed["money"]["missed_usd"] == dashboard["missed_usd"]


def test_missed_savings_are_unknown_when_no_request_could_be_priced(tmp_path):
    """Money is exact or null: a log whose every request is of an unpriced model, or priced
    null for rules drift, missed an unknown amount, not $0.00."""
    usage = {"prompt_tokens": 2000, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 0}}
    unpriced = [
        {"request": body(STATIC, f"q{i}", model="private-llm"), "response": {"usage": usage}}
        for i in range(3)
    ]
    summary, _ = run_analysis(
        [str(write_jsonl(tmp_path / "a.jsonl", unpriced))], AnalyzeConfig(prices=PriceTable.load())
    )
    assert summary["money"]["missed_usd"] is None
    drifted = {**usage, "prompt_tokens_details": {"cached_tokens": 0, "cache_bonus_tokens": 5}}
    odd = [
        {"request": body(STATIC, f"q{i}", model="gpt-4o"), "response": {"usage": drifted}} for i in range(3)
    ]
    summary, _ = run_analysis(
        [str(write_jsonl(tmp_path / "b.jsonl", odd))], AnalyzeConfig(prices=PriceTable.load())
    )
    assert summary["rules_drift"]["requests"] == 3 and summary["money"]["missed_usd"] is None
    text = CliRunner().invoke(analyze_command, [str(tmp_path / "b.jsonl")]).stdout
    assert "missed savings —" in text and "missed savings $0.00" not in text
    # one priced request among them: a sum again
    mixed = odd + [{"request": body(STATIC, "q9", model="gpt-4o"), "response": {"usage": usage}}]
    summary, _ = run_analysis(
        [str(write_jsonl(tmp_path / "c.jsonl", mixed))], AnalyzeConfig(prices=PriceTable.load())
    )
    assert summary["money"]["missed_usd"] is not None and summary["money"]["missed_usd"] > 0
