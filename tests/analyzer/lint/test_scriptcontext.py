"""analyzer.lint.sources.scriptcontext: the name PHP and Ruby code gives a literal, and where it
stands that it is no prompt (logs, errors, output, SQL, keys, comparisons, labels)."""

from __future__ import annotations

import pytest

from analyzer.lint.sources import scripts

TEXT = "You are a helpful assistant for the user and you answer"


def names(src: str, suffix: str) -> list[str]:
    return [t.name for t in scripts.templates(src, suffix)]


@pytest.mark.parametrize(
    "src, suffix, want",
    [
        (f'<?php $systemPrompt = "{TEXT}";', ".php", ["$systemPrompt"]),
        (
            f'<?php class A {{ private $prompt = "{TEXT}"; const SYSTEM = "{TEXT}"; }}',
            ".php",
            ["$prompt", "SYSTEM"],
        ),
        (f"<?php define('SYSTEM_PROMPT', \"{TEXT}\");", ".php", ["SYSTEM_PROMPT"]),
        (f"<?php $m = ['role' => 'system', 'content' => \"{TEXT}\"];", ".php", ["content"]),
        (f'<?php $m = new Message(content: "{TEXT}");', ".php", ["content"]),
        (f'<?php function instructions() {{ return trim("{TEXT}"); }}', ".php", ["instructions"]),
        (f'<?php error_log("{TEXT}"); Log::warning("{TEXT}"); echo "{TEXT}"; print("{TEXT}");', ".php", []),
        (f'<?php throw new RuntimeException("{TEXT}");', ".php", []),
        (f'<?php $rows = ["{TEXT}" => 1]; $v = $map["{TEXT}"];', ".php", []),
        (f'<?php if ($a == "{TEXT}") {{}} switch ($a) {{ case "{TEXT}": break; }}', ".php", []),
        (f'<?php $sql = "{TEXT}"; $db->prepare("SELECT * FROM t WHERE a = 1");', ".php", []),
        (f'SYSTEM_PROMPT = "{TEXT}".freeze', ".rb", ["SYSTEM_PROMPT"]),
        (f'def instructions\n  "{TEXT}"\nend', ".rb", ["instructions"]),
        (f'chat(messages: [{{ role: "system", content: "{TEXT}" }}])', ".rb", ["content"]),
        (f'Rails.logger.warn("{TEXT}")\nputs "{TEXT}"\nraise "{TEXT}"', ".rb", []),
        (f'h = {{ "{TEXT}" => 1 }}\nx = ENV["{TEXT}"]', ".rb", []),
        (f'ok = a == "{TEXT}"\ncase a\nwhen "{TEXT}" then 1\nend', ".rb", []),
        (f'ok = "{TEXT}".include?(x)', ".rb", []),
        (f'User.find_by_sql("SELECT * FROM users")\nUser.where("{TEXT}")', ".rb", []),
    ],
)
def test_names_and_skips(src, suffix, want):
    assert names(src, suffix) == want
