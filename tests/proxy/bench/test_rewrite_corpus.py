"""proxy.bench.rewrite_corpus: `prefixgate bench rewrite --corpus DIR`, off vs aggressive head reuse."""

from __future__ import annotations

import json

from click.testing import CliRunner

from proxy.bench.rewrite import bench_rewrite_command
from proxy.bench.rewrite_corpus import labelled, measure, prompts

POLICY = "Answer in full sentences. Refunds take five days. Never share internal notes. " * 20


def _corpus(tmp_path):
    repo = tmp_path / "acme__agent"
    repo.mkdir()
    (repo / "SOURCE.md").write_text("repo: acme/agent\nhalf: dev\n", encoding="utf-8")
    (repo / "system.md").write_text(
        f"You are Nova.\nCurrent time: ⟦2025-04-24 13:52:03⟧\nTokens used: ⟦48,213⟧ / 200,000\n\n{POLICY}",
        encoding="utf-8",
    )
    (repo / "env.txt").write_text(
        f"You are a coding agent.\n\n⟦<env>\nWorking directory: /home/ana/shop\nToday's date: 2026-11-30\n</env>⟧\n\n{POLICY}",
        encoding="utf-8",
    )
    (repo / "code.py").write_text('PROMPT = f"Now: ⟦{now}⟧"\n', encoding="utf-8")  # code: skipped
    (repo / "hook.sh").write_text('echo "Git: ⟦${BRANCH}⟧"\n', encoding="utf-8")  # a shell script too
    (repo / "chat.jinja").write_text("{%- set today = ⟦strftime_now('%d %b %Y')⟧ %}\n", encoding="utf-8")
    return tmp_path


def test_marks_cut_a_prompt_into_text_and_spans():
    assert labelled("a ⟦b⟧ c ⟦d⟧.") == (["a ", " c ", "."], ["b", "d"])


def test_aggressive_keeps_the_head_where_off_forks_it_and_keeps_every_value(tmp_path):
    folder = _corpus(tmp_path)
    assert [name for name, _, _ in prompts(folder)] == ["acme__agent/env.txt", "acme__agent/system.md"]
    result = measure(folder)
    off, aggressive = result["head_reuse"]["off"], result["head_reuse"]["aggressive"]
    assert result["prompts"] == 2 and off["mean"] < 0.2 and aggressive["mean"] > 0.95
    assert aggressive["share_at_0.9"] == 1.0 and result["values_kept"] == result["values"] == 6


def test_the_command_prints_json_and_a_table(tmp_path):
    out = CliRunner().invoke(bench_rewrite_command, ["--corpus", str(_corpus(tmp_path))])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout[: out.stdout.rindex("}") + 1])
    assert data["bench"] == "rewrite-corpus" and "values kept by aggressive: 6 of 6" in out.stdout
    empty = tmp_path / "empty"
    empty.mkdir()
    bad = CliRunner().invoke(bench_rewrite_command, ["--corpus", str(empty)])
    assert bad.exit_code != 0 and "no labelled prompt" in bad.output


def test_a_marker_counts_as_one_character_and_the_added_bytes_are_reported(tmp_path):
    """A value moved after a difference that stays gains nothing, and must not look like a loss."""
    (tmp_path / "late.md").write_text(
        f"You are the assistant of tenant ⟦{{tenant_slug}}⟧.\n{POLICY}\nCurrent time: ⟦2025-04-24 13:52:03⟧\n",
        encoding="utf-8",
    )
    result = measure(tmp_path)
    (row,) = result["rows"]
    assert row["off"] < 0.2 and row["aggressive"] >= row["off"]
    assert row["added_chars"] > 0 and result["added_chars_mean"] == row["added_chars"]


def test_a_json_value_whose_timestamps_move_with_their_labels_is_kept(tmp_path):
    """The detector moves the timestamps out of a rendered state JSON: its words, quotes and braces
    aside, are all still in the request."""
    state = ", ".join(
        f'"sensor_{i}": {{"last_update": "2025-09-04T13:{40 + i}:25.926751"}}' for i in range(4)
    )
    (tmp_path / "state.md").write_text(
        f"You are a home assistant.\nCurrent sensors:\n⟦{{{state}}}⟧\n\n{POLICY}", encoding="utf-8"
    )
    result = measure(tmp_path)
    assert result["values_kept"] == result["values"] == 2
