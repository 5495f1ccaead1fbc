"""`prefixgate bench lint` runs end to end on a few prompts and reports both detectors
(a smoke test: benchmarks are not timed tests)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from analyzer.detect import find_volatile
from analyzer.lint.bench import legacy_detect
from analyzer.lint.bench.command import bench_lint_command
from analyzer.lint.bench.prompts import prompts
from proxy.cli import BENCH_COMMANDS


def test_bench_lint_prints_json_and_a_table():
    result = CliRunner().invoke(bench_lint_command, ["--prompts", "12", "--size", "4KiB"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout[: result.stdout.rindex("}") + 1])
    assert data["prompts"] == 12 and data["detect"]["before_ms"] > 0 and data["detect"]["after_ms"] > 0
    assert data["lint_command"]["exit_code"] == 0 and data["lint_in_process"]["findings"] > 0
    assert "detect, ms per 4 KB prompt" in result.stdout
    assert BENCH_COMMANDS["lint"] == "analyzer.lint.bench.command:bench_lint_command"


def test_generated_prompts_are_deterministic_and_find_only_the_header_values():
    a, b = prompts(3, 20_480), prompts(3, 20_480)
    assert a == b and all(len(p) == 20_480 for p in a)
    for p in a:
        assert [v.kind for v in find_volatile(p)] == ["today-phrase", "time", "request-id", "uuid"]
        assert (
            len(legacy_detect.find_volatile(p)) > 4
        )  # the old detector also flags examples, cut-offs and versions
