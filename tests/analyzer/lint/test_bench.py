"""`prefixgate bench lint` runs end to end on a few prompts and reports both detectors, the
corpus figures, and promptcachelint's absence plainly (a smoke test: benchmarks are not timed
tests; nothing is downloaded: the peer comes from an empty wheel folder or is left out)."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from analyzer.detect import find_volatile
from analyzer.lint.bench import legacy_detect
from analyzer.lint.bench.command import bench_lint_command
from analyzer.lint.bench.corpus import half_of
from analyzer.lint.bench.prompts import prompts
from proxy.cli import BENCH_COMMANDS


def _corpus(tmp_path):
    repo = tmp_path / "real" / "acme__agent"
    repo.mkdir(parents=True)
    half = half_of("acme/agent")
    (repo / "SOURCE.md").write_text(f"repo: acme/agent\nhalf: {half}\n", encoding="utf-8")
    (repo / "a.md").write_text("You are Nova.\nCurrent time: ⟦14:05:09⟧\nBe brief.\n", encoding="utf-8")
    return repo.parent, half


def test_bench_lint_prints_json_and_a_table(tmp_path):
    corpus, half = _corpus(tmp_path)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    args = [
        "--prompts",
        "12",
        "--size",
        "4KiB",
        "--corpus",
        str(corpus),
        "--half",
        half,
        "--peer",
        str(wheels),
    ]
    result = CliRunner().invoke(bench_lint_command, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout[: result.stdout.rindex("}") + 1])
    assert "error" in data["peer"] and "promptcachelint" in result.stdout and "(ours alone)" in result.stdout
    assert (
        data["quality"]["prefixgate"] == {"precision": 1.0, "recall": 1.0}
        and "promptcachelint" not in data["quality"]
    )
    assert data["prompts"] == 12 and data["detect"]["before_ms"] > 0 and data["detect"]["after_ms"] > 0
    assert data["lint_command"]["exit_code"] == 0 and data["lint_in_process"]["findings"] > 0
    assert "detect, ms per 4 KB prompt" in result.stdout
    assert BENCH_COMMANDS["lint"] == "analyzer.lint.bench.command:bench_lint_command"


def test_generated_prompts_are_deterministic_and_find_only_the_header_values():
    a, b = prompts(3, 20_480), prompts(3, 20_480)
    assert a == b and all(len(p) == 20_480 for p in a)
    for p in a:
        kinds = ["today-phrase", "time", "request-id", "uuid", "placeholder"]  # the last: {customer_name}
        assert [v.kind for v in find_volatile(p)] == kinds
        assert (
            len(legacy_detect.find_volatile(p)) > 5
        )  # the old detector also flags examples, cut-offs and versions


def test_the_peer_scores_and_times_beside_ours_when_given(monkeypatch):
    from analyzer.lint.bench import command, peer

    class FakeDetectors:  # the peer's detector module, as a unit test of the bench's plumbing
        class P:
            name = "iso"
            regex = re.compile(r"\d{2}:\d{2}:\d{2}")

        VOLATILE_PATTERNS = (P,)

        @staticmethod
        def volatile_content(segments, cacheable):
            return []

    class FakeModel:
        @staticmethod
        def Segment(*a):
            return a

    monkeypatch.setattr(command, "install", lambda target, links: peer.Peer("9.9", FakeDetectors, FakeModel))
    result = command.measure(10, 2048, None, "test", "index")
    assert (
        result["peer"]["version"] == "9.9" and result["peer"]["ours_ms"] > 0 and "speedup" in result["peer"]
    )
    assert "detect>=1.1x_peer" in result["targets_met"]
