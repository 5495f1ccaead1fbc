"""analyzer.lint.sources.scripts: PHP and Ruby prompt-building code, each volatile interpolation,
operand or format argument found; logs, errors, SQL, array keys and comparisons not; an
unparsable file read as text."""

from __future__ import annotations

from analyzer.lint.engine import run
from analyzer.lint.inputs import load
from analyzer.lint.sources import scripts
from analyzer.lint.sources.pieces import volatile_values

CODES = {f"PG00{i}" for i in range(1, 10)}


def found(text: str, suffix: str) -> list[tuple[str, str]]:
    ts = scripts.templates(text, suffix)
    assert ts is not None
    return [(v.value, v.reason) for t in ts for v in volatile_values(t) if v.kind != "today-phrase"]


def names(text: str, suffix: str) -> list[str]:
    return [t.name for t in scripts.templates(text, suffix)]


PHP = """<?php
use Carbon\\Carbon;

class Prompts
{
    public static function system($user): string
    {
        $now = date('Y-m-d');
        $prompt = "You are a helpful assistant. Today is $now. The user is {$user->name}.";
        return $prompt . "\\nCurrent time: " . Carbon::now()->toDateTimeString();
    }

    public static function other($db, $user)
    {
        error_log("The user {$user->name} asked a question at " . date('c'));
        throw new Exception("Could not answer the user at " . date('H:i'));
        $db->query("SELECT * FROM users WHERE created_at > '" . date('Y-m-d') . "'");
        $rows = ["You are the array key of the user, not a prompt" => 1];
        if ($role === "You are compared with the role of the user") {}
        echo "Welcome back {$user->name}, it is " . date('H:i') . " and you are here";
        $messages = [['role' => 'system', 'content' => sprintf('You are a bot. Now: %s', date('c'))]];
    }
}
"""


def test_php_interpolation_concatenation_and_sprintf():
    assert found(PHP, ".php") == [
        ("$now", "named `now`: a clock reading"),
        ("{$user->name}", "named `user.name`: a field of the user served, per user"),
        ("Carbon::now()->toDateTimeString()", "calls `Carbon.now()`"),
        ("date('c')", "calls `date()`: the clock"),  # the argument filling %s
    ]
    assert names(PHP, ".php") == [
        "$prompt",
        "system",
        "content",
    ]  # no log, error, SQL, key, test, echo or type


def test_php_heredocs_interpolate_and_nowdocs_and_single_quotes_do_not():
    text = (
        "<?php\n$system = <<<EOT\nYou are an assistant for {$user->email}.\n"
        "The current time is ${now}.\nEOT;\n"
        "$now = time();\n"
        "$raw = <<<'EOT'\nYou are an assistant for {$user->email} today.\nEOT;\n"
        "$tpl = 'You are an assistant for $user and the time is $now';\n"
    )
    assert found(text, ".php") == [
        ("{$user->email}", "named `user.email`: a field of the user served, per user"),
        ("${now}", "named `now`: a clock reading"),
    ]


def test_php_dates_of_a_given_moment_are_not_the_clock():
    text = "<?php\n$p = \"You are a bot. The post was written on \" . date('F j, Y', $post->created);"
    assert found(text, ".php") == []


RUBY = """class PromptService
  def system_prompt
    "You are a helpful assistant. Today is #{Date.today}. The user is #{current_user.name}."
  end

  def chat(user)
    prompt = format("You are a bot for %s. The time is %s", user.company, Time.now)
    other = "You are a bot for the team. Now: %s" % [DateTime.now.strftime('%H:%M')]
    named = format("You are a bot for the team. Now: %<t>s", t: Time.current)
    text = <<~EOS
      You are an assistant on #{Time.now.strftime('%A')}.
      Answer the user politely.
    EOS
    Rails.logger.info("User #{current_user.name} asked at #{Time.now}")
    raise ArgumentError, "You cannot ask the assistant at #{Time.now} for the user"
    puts "Hello #{current_user.name}, it is #{Time.now} and you are welcome"
    User.where("created_at > '#{Date.today}'")
    return if role == "You are compared with the role of the user"
    { "You are the key of the hash, not a prompt" => 1 }
  end
end
"""


def test_ruby_interpolation_heredocs_and_formats():
    assert found(RUBY, ".rb") == [
        ("#{Date.today}", "calls `Date.today()`"),
        ("#{current_user.name}", "named `current_user.name`: a field of the current_user served, per user"),
        ("user.company", "named `user.company`: a field of the user served, per user"),
        ("Time.now", "calls `Time.now()`"),
        ("DateTime.now.strftime('%H:%M')", "calls `DateTime.now()`"),
        ("%<t>s", "calls `Time.current`"),
        ("#{Time.now.strftime('%A')}", "calls `Time.now()`"),
    ]
    assert names(RUBY, ".rb") == ["system_prompt", "prompt", "other", "named", "text"]


def test_a_file_that_does_not_parse_is_read_as_prompt_text(tmp_path):
    assert scripts.templates("<?php function ( { You are a bot. Today is 2024-05-01.", ".php") is None
    assert scripts.templates("def x(\nYou are a bot. Today is 2024-05-01.", ".rb") is None
    for name in ("broken.php", "broken.rb"):
        path = tmp_path / name
        path.write_text(
            "<?php function ( {\nYou are a bot for the user. Today is 2024-05-01.\n", encoding="utf-8"
        )
        loaded = load([str(path)])
        assert loaded.errors == [] and any(f.line == 2 for f in run(loaded, CODES))


def test_findings_point_at_the_value_in_the_file(tmp_path):
    text = '<?php\n$p = "You are a bot for the user.";\n$p .= "Now: " . date(\'H:i\');\n'
    path = tmp_path / "p.php"
    path.write_text(text, encoding="utf-8")
    (f,) = [f for f in run(load([str(path)]), CODES) if f.code == "PG004"]
    line = text.splitlines()[f.line - 1]
    assert (f.line, line[f.col - 1 : f.end_col - 1]) == (3, "date('H:i')")


def test_php_and_ruby_files_in_a_folder_are_read_as_source(tmp_path):
    (tmp_path / "a.php").write_text("<?php\nerror_log('You are a bot. Today is 2024-05-01 for the user');\n")
    (tmp_path / "b.rb").write_text('PROMPT = "You are a bot for the user. Now: #{Time.now}"\n')
    findings = run(load([str(tmp_path)]), CODES)
    assert [(f.file.rsplit("/", 1)[-1], f.code) for f in findings] == [("b.rb", "PG004")]


def test_a_php_file_that_only_returns_plain_literals_is_data_read_as_text(tmp_path):
    data = "<?php\nreturn $p = [\n  'system' => ['content' => \"You are a bot. Today is 2025-05-23.\"],\n];"
    assert scripts.templates(data, ".php") is None
    path = tmp_path / "prompts.php"
    path.write_text(data, encoding="utf-8")
    assert {f.line for f in run(load([str(path)]), CODES)} == {3}  # the date, as in a YAML prompt file
    code = "<?php\nreturn ['system' => \"You are a bot for {$user->name}. Updated: 2025-05-23 04:17:40\"];\n"
    assert scripts.templates(code, ".php") is not None  # it interpolates: code
