"""Which replica served each row: the ledger's ``replica`` column (schema 7, an older ledger
migrated in place, ``prefixgate analyze`` still reading it), the summary's per-replica rows and
the ``prefixgate_replica_*`` metrics labelled by upstream and replica, capped."""

from __future__ import annotations

import json
import sqlite3

from click.testing import CliRunner

from analyzer.logs.ledger_columns import COLUMN_TYPES, COLUMNS
from proxy.accounting.ledger import open_ledger, row_for
from proxy.accounting.ledger_schema import SCHEMA_VERSION
from proxy.accounting.metrics import Metrics
from proxy.cli import cli
from proxy.reporting.summary import summarize
from tests.support.prometheus import samples
from tests.support.request_records import records, write

A, B = "http://engine-0:8000/v1", "http://engine-1:8000/v1"


def pooled():
    out = records()
    for i, r in enumerate(out):
        r.upstream, r.replica = ("llama", A if i % 3 else B) if i < 9 else (r.upstream, None)
    return out


def test_the_ledger_stores_the_replica_and_the_summary_has_a_row_per_replica(tmp_path):
    assert ("replica", "TEXT") in COLUMN_TYPES and SCHEMA_VERSION == "7"
    recs = pooled()
    assert row_for(recs[1], False)[COLUMNS.index("replica")] == A
    path = str(tmp_path / "l.sqlite")
    write(path, recs)
    conn = open_ledger(path)
    s = summarize(conn)
    llama = s["upstreams"]["llama"]
    assert set(llama["replicas"]) == {A, B}
    assert llama["replicas"][A]["requests"] == 6 and llama["replicas"][B]["requests"] == 3
    assert sum(r["cached_tokens"] for r in llama["replicas"].values()) == llama["cached_tokens"]
    assert all("replicas" not in u for name, u in s["upstreams"].items() if name != "llama")
    assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("7",)
    conn.close()


def test_an_older_ledger_gains_the_replica_column_and_analyze_still_reads_it(tmp_path):
    path = str(tmp_path / "v6.sqlite")
    old = [(n, k) for n, k in COLUMN_TYPES if n != "replica"]
    conn = sqlite3.connect(path)
    conn.execute(f"CREATE TABLE requests (id INTEGER PRIMARY KEY, {', '.join(f'{n} {k}' for n, k in old)})")
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    conn.execute("INSERT INTO meta VALUES ('schema_version', '6')")
    conn.execute(
        "INSERT INTO requests (request_id, ts, tenant, provider, route, method, status, analysed, input_tokens, "
        "cached_tokens, cache_write_tokens, output_tokens, chain) VALUES "
        "('old', 1.0, 't', 'openai', '/v1/chat/completions', 'POST', 200, 1, 2000, 1024, 0, 5, 'aaaaaaaaaaaaaaaa')"
    )
    conn.commit()
    conn.close()
    conn = open_ledger(path)
    types = {row[1]: row[2] for row in conn.execute("PRAGMA table_info(requests)")}
    assert types["replica"] == "TEXT"
    assert conn.execute("SELECT replica FROM requests").fetchall() == [(None,)]
    assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("7",)
    conn.close()
    write(path, pooled()[:3])  # new rows beside the old one
    out = CliRunner().invoke(cli, ["analyze", path, "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    assert report["requests"] == 4 and report["input_errors"] == 0


def test_replica_metrics_are_labelled_by_upstream_and_replica_and_capped():
    def snapshot():
        return {
            "llama": {
                "replicas": [
                    {"url": u, "requests": 3 + i, "in_flight": i, "prompt_tokens": 100, "cached_tokens": 60}
                    | {"errors": i, "retried_away": 0, "spilled": 1, "heads": 2, "health": {"state": s}}
                    for i, (u, s) in enumerate([(A, "up"), (B, "down")])
                ]
            }
        }

    m = Metrics()
    m.attach_replicas(snapshot)
    got = samples(m)
    a = (("replica", A), ("upstream", "llama"))
    b = (("replica", B), ("upstream", "llama"))
    assert got[("prefixgate_replica_requests_total", a)] == 3
    assert got[("prefixgate_replica_requests_total", b)] == 4
    assert got[("prefixgate_replica_cached_tokens_total", a)] == 60
    assert got[("prefixgate_replica_in_flight", b)] == 1
    assert got[("prefixgate_replica_up", a)] == 1 and got[("prefixgate_replica_up", b)] == 0
    assert got[("prefixgate_replica_heads", a)] == 2
    capped = Metrics(max_upstreams=1)
    capped.attach_replicas(snapshot)
    assert {k[1] for k in samples(capped) if k[0] == "prefixgate_replica_requests_total"} == {a}
