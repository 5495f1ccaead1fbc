"""analyzer.lint.sources.scriptbuild: PHP ``.=`` and Ruby ``<<`` / ``+=`` texts as one template each,
slot replacements (``str_replace``, ``strtr``, ``gsub``) and prompt-named formats that are no
literal; SQL built the same way, arrays appended to and keys that are no slot are not prompts."""

from __future__ import annotations

from analyzer.lint.sources import scripts
from analyzer.lint.sources.pieces import volatile_values


def templates(text: str, suffix: str) -> list[tuple[str, str, list[str]]]:
    return [
        (t.name, t.text, [v.value for v in volatile_values(t) if v.kind != "today-phrase"])
        for t in scripts.templates(text, suffix)
    ]


def test_a_php_text_written_piece_by_piece_is_one_template():
    text = """<?php
function build($user) {
    $prompt = "You are a support agent.\\n";
    $prompt .= "The user is " . $user->name . ".\\n";
    $prompt .= "Current date: " . date('Y-m-d');
    $sql = "SELECT * FROM t";
    $sql .= " WHERE created_at > '" . date('Y-m-d') . "'";
    $prompt = "Answer briefly.";
}
"""
    assert templates(text, ".php") == [
        (
            "$prompt",
            "You are a support agent.\nThe user is $user->name.\nCurrent date: date('Y-m-d')",
            ["$user->name", "date('Y-m-d')"],
        ),
        ("$prompt", "Answer briefly.", []),  # a new assignment: a new text
    ]  # the SQL is no prompt


def test_a_ruby_text_appended_to_is_one_template_but_an_array_is_not():
    text = """def build(user)
  prompt = "You are a support agent. "
  prompt << "Today is #{Date.today}. " << "Be brief."
  prompt += "The user is " + user.name
  messages = []
  messages << { role: "user", content: user.question }
end
"""
    assert templates(text, ".rb") == [
        (
            "prompt",
            "You are a support agent. Today is #{Date.today}. Be brief.The user is user.name",
            ["#{Date.today}", "user.name"],
        )
    ]


def test_values_put_into_slots_are_found():
    php = """<?php
$tpl = file_get_contents(__DIR__ . '/prompt.txt');
$a = str_replace('{{date}}', date('Y-m-d'), $tpl);
$b = str_replace(['{{name}}', '{{now}}'], [$user->name, Carbon::now()->toIso8601String()], $tpl);
$c = strtr($tpl, ['{date}' => date('Y-m-d'), '{site}' => $siteName]);
$d = sprintf($this->systemPrompt, date('l'));
$e = str_replace('needle', date('Y-m-d'), $haystack);
"""
    assert templates(php, ".php") == [
        ("replace", "date('Y-m-d')", ["date('Y-m-d')"]),
        ("replace", "$user->name", ["$user->name"]),
        ("replace", "Carbon::now()->toIso8601String()", ["Carbon::now()->toIso8601String()"]),
        ("replace", "date('Y-m-d')", ["date('Y-m-d')"]),
        ("$this->systemPrompt", "date('l')", ["date('l')"]),
    ]  # 'needle' is no slot
    ruby = """tpl = File.read("prompt.txt")
a = tpl.gsub('{{date}}', Date.today.to_s)
b = format(SYSTEM_PROMPT, Time.now)
c = PROMPT_TEMPLATE % { now: Time.now }
d = name.gsub('-', Time.now.to_s)
"""
    assert templates(ruby, ".rb") == [
        ("replace", "Date.today.to_s", ["Date.today.to_s"]),
        ("SYSTEM_PROMPT", "Time.now", ["Time.now"]),
        ("PROMPT_TEMPLATE", "Time.now", ["Time.now"]),
    ]


def test_a_ruby_gsub_whose_pattern_is_a_slot_fills_it():
    ruby = """current_time = Time.current.strftime('%d.%m.%Y %H:%M')
a = tpl.gsub(/{{\\s*CURRENT_TIME\\s*}}/, current_time)
b = tpl.gsub(/\\{date\\}/, Date.today.to_s)
c = name.gsub(/[-_]+/, Time.now.to_s)
"""
    # a pattern that is a slot less its spacing and escapes; one that is no slot ([-_]+) is not
    assert templates(ruby, ".rb") == [
        ("replace", "current_time", ["current_time"]),
        ("replace", "Date.today.to_s", ["Date.today.to_s"]),
    ]
