"""analyzer.lint.sources.compiled: Go, Rust, Java, C# and Kotlin prompt-building code, each volatile
slot, interpolation or operand found; logs, errors, tags and SQL not; an unparsable file read as text."""

from __future__ import annotations

from analyzer.lint.engine import run
from analyzer.lint.inputs import load
from analyzer.lint.sources import compiled
from analyzer.lint.sources.pieces import volatile_values

CODES = {f"PG00{i}" for i in range(1, 10)}


def found(text: str, suffix: str) -> list[tuple[str, str]]:
    ts = compiled.templates(text, suffix)
    assert ts is not None
    return [(v.value, v.reason) for t in ts for v in volatile_values(t) if v.kind != "today-phrase"]


def names(text: str, suffix: str) -> list[str]:
    return [t.name for t in compiled.templates(text, suffix)]


GO = """package agent

import (
	"fmt"
	"log"
	"time"
)

type Config struct {
	Prompt string `json:"prompt" yaml:"prompt"`
}

const basePrompt = `You are a support agent for our store. Answer the user's question politely.`

func systemPrompt(user string) string {
	now := time.Now()
	p := fmt.Sprintf("You are a helpful assistant. Today is %s. The user is %s.", now.Format("2006-01-02"), user)
	return p + "\\nYou help the user plan trips. Current time: " + time.Now().Format(time.RFC3339)
}

func other(db *DB) {
	log.Printf("request for the user started at %s", time.Now())
	_ = fmt.Errorf("the user %s could not be found at %v", "x", time.Now())
	db.Query("SELECT id FROM users WHERE created_at > '2024-01-01 10:00:00'")
	msg := openai.ChatCompletionMessage{Role: "system", Content: fmt.Sprintf("You are a bot for the team. The date is %[1]v", time.Now())}
	_ = msg
}
"""


def test_go_sprintf_raw_strings_and_concatenation():
    assert found(GO, ".go") == [
        ('now.Format("2006-01-02")', "named `now`: a clock reading"),  # the argument filling %s
        ("time.Now().Format(time.RFC3339)", "calls `time.Now()`"),
        ("time.Now()", "calls `time.Now()`"),  # the argument filling %[1]v
    ]
    assert names(GO, ".go") == ["basePrompt", "p", "systemPrompt", "Content"]  # no tag, log, error or SQL


RUST = """use chrono::{Local, Utc};

const SYSTEM: &str = r#"You are a "careful" assistant for the user. Be brief."#;

fn build(user: &str) -> String {
    let today = Local::now().format("%Y-%m-%d").to_string();
    let prompt = format!("You are a helpful assistant for the user. Today is {today}. Session {}.", uuid::Uuid::new_v4());
    let more = format!("Current time: {0} for {who}", Utc::now().to_rfc3339(), who = user);
    prompt + &more
}

fn log_it() {
    println!("the user asked about the weather at {}", Utc::now());
    tracing::info!("request for the user started at {}", Utc::now());
}

#[derive(Serialize)]
struct Msg {
    #[serde(rename = "You are the content of the message for the user")]
    body: String,
}
"""


def test_rust_format_macros_captures_and_raw_strings():
    assert found(RUST, ".rs") == [
        ("{today}", "named `today`: today's date"),
        ("uuid::Uuid::new_v4()", "calls `uuid::Uuid::new_v4()`"),
        ("Utc::now().to_rfc3339()", "calls `Utc::now()`"),
    ]
    ts = compiled.templates(RUST, ".rs")
    assert ts[0].text == 'You are a "careful" assistant for the user. Be brief.'
    assert [t.name for t in ts] == ["SYSTEM", "prompt", "more"]


JAVA = '''import java.time.LocalDate;

public class Prompts {
    @SystemMessage("""
        You are a helpful assistant for the user. \\
        Today is {{current_date}}.
        """)
    String chat(String message);

    String system(String user) {
        String p = String.format("You are a travel assistant for the user. Today is %s.", LocalDate.now());
        return p + " Session started at " + Instant.now() + ".";
    }

    String other() {
        return "Current date: %s. You answer the user's questions.".formatted(LocalDateTime.now());
    }

    void noise() {
        logger.info("Handling the request for the user at {}", Instant.now());
        System.out.println("You are now connected to the server at " + Instant.now());
        throw new IllegalStateException("The user is not allowed to do this at " + Instant.now());
    }
    @JsonProperty("created_at") String createdAt;
}
'''


def test_java_text_blocks_format_and_formatted():
    assert found(JAVA, ".java") == [
        ("{{current_date}}", "named `current_date`: today's date"),
        ("LocalDate.now()", "calls `LocalDate.now()`"),
        ("Instant.now()", "calls `Instant.now()`"),  # `p` is judged where it is built, not again
        ("LocalDateTime.now()", "calls `LocalDateTime.now()`"),
    ]
    ts = compiled.templates(JAVA, ".java")
    assert "\\" not in ts[0].text and "user.\n" not in ts[0].text  # the line continuation joins the lines
    assert [t.name for t in ts] == ["SystemMessage", "p", "system", "other"]


CSHARP = '''using System;

public class Prompts
{
    private const string Persona = @"You are a ""friendly"" assistant for the user.
Answer briefly.";

    public string System(string user) =>
        $"You are a helpful assistant for {user}. The current time is {DateTime.Now:HH:mm}.";

    public string Raw() => $$"""
        You are a planner for the team. Today is {{DateTime.UtcNow.ToShortDateString()}}.
        Reply in JSON like {"step": 1}.
        """;

    public string Formatted() => string.Format("You are a bot for the user. Now: {0}. Id: {1}", DateTimeOffset.Now, Guid.NewGuid());

    public void Noise()
    {
        Console.WriteLine($"The user asked about the weather at {DateTime.Now}");
        _logger.LogInformation("Request for the user started at {Time}", DateTime.UtcNow);
        throw new ArgumentException($"You are not allowed to do this at {DateTime.Now}");
    }
}
'''


def test_csharp_interpolated_verbatim_raw_and_string_format():
    assert found(CSHARP, ".cs") == [
        ("{DateTime.Now:HH:mm}", "calls `DateTime.Now()`"),
        ("{{DateTime.UtcNow.ToShortDateString()}}", "calls `DateTime.UtcNow()`"),
        ("DateTimeOffset.Now", "calls `DateTimeOffset.Now()`"),
        ("Guid.NewGuid()", "calls `Guid.NewGuid()`"),
    ]
    ts = compiled.templates(CSHARP, ".cs")
    assert ts[0].text == 'You are a "friendly" assistant for the user.\nAnswer briefly.'
    assert [t.name for t in ts] == ["Persona", "System", "Raw", "Formatted"]


KOTLIN = '''import java.time.LocalDate

val SYSTEM = """
    You are a helpful assistant for the user. Today is ${LocalDate.now()}.
""".trimIndent()

fun prompt(user: String): String {
    val p = "You help $user plan the week. The time is " + System.currentTimeMillis()
    return String.format("You are a coach for the user. Date: %s", LocalDate.now())
}

fun noise() {
    Log.d("tag", "the user asked you about ${LocalDate.now()}")
    println("You are connected at ${LocalDate.now()}")
}
'''


def test_kotlin_string_templates_and_format():
    assert found(KOTLIN, ".kt") == [
        ("${LocalDate.now()}", "calls `LocalDate.now()`"),
        ("System.currentTimeMillis()", "calls `System.currentTimeMillis()`"),
        ("LocalDate.now()", "calls `LocalDate.now()`"),
    ]


def test_a_file_that_does_not_parse_is_read_as_prompt_text(tmp_path):
    assert compiled.templates("func ( {{ You are a bot. Today is 2024-05-01.", ".go") is None
    path = tmp_path / "broken.go"
    path.write_text("func ( {{\nYou are a bot for the user. Today is 2024-05-01.\n", encoding="utf-8")
    loaded = load([str(path)])
    findings = run(loaded, CODES)
    assert loaded.errors == [] and any(f.line == 2 for f in findings)


def test_findings_point_at_the_argument_in_the_file(tmp_path):
    text = 'package p\n\nfunc s() string {\n\treturn fmt.Sprintf("You are a bot for the user. Now: %s", time.Now())\n}\n'
    path = tmp_path / "p.go"
    path.write_text(text, encoding="utf-8")
    (f,) = [f for f in run(load([str(path)]), CODES) if f.code == "PG004"]
    line = text.splitlines()[f.line - 1]
    assert (f.line, line[f.col - 1 : f.end_col - 1]) == (4, "time.Now()")  # not the %s it fills
    assert f.message.endswith("calls `time.Now()`")


GO_TEMPLATE = """package agent

func render(w io.Writer, hud *HUD) error {
	return promptTemplate.Execute(w, struct {
		HUD  *HUD
		Time string
	}{
		HUD:  hud,
		Time: time.Now().UTC().Format(time.RFC1123),
	})
}
"""


def test_the_data_a_go_template_is_executed_with_fills_its_slots():
    assert found(GO_TEMPLATE, ".go") == [("time.Now().UTC().Format(time.RFC1123)", "calls `time.Now()`")]


GO_DECLARED_DATA = """package agent

func build(w io.Writer) error {
	data := promptData{
		Date: time.Now().Format("Monday, January 2, 2006"),
		Name: cfg.Name,
	}
	report := &stats{At: time.Now()}
	log.Print(report)
	return systemPromptTmpl.Execute(w, data)
}
"""


def test_a_go_template_executed_with_a_name_declared_as_its_data():
    # the literal data holds fills the template; one never executed with is no prompt's
    assert found(GO_DECLARED_DATA, ".go") == [
        ('time.Now().Format("Monday, January 2, 2006")', "calls `time.Now()`")
    ]
    # the same name declared in another function, and only logged there, fills nothing
    other = 'package x\n\nfunc a(w io.Writer) error {\n\tdata := promptData{Name: "x"}\n\treturn tmpl.Execute(w, data)\n}\n'
    other += '\nfunc b() {\n\tdata := promptData{Time: time.Now().Format("15:04")}\n\tlog.Print(data)\n}\n'
    assert found(other, ".go") == []


SWIFT = '''import Foundation

struct PromptBuilder {
    static func systemPrompt(for user: User) -> String {
        let today = formatter.string(from: Date())
        var prompt = "You are a helpful assistant for the user.\\n"
        prompt += "Today is \\(today). The user's name is \\(user.name).\\n"
        return prompt
    }

    static let base = """
    You are Ava, an assistant on macOS.
    The current date is \\(Date().formatted(date: .complete, time: .omitted)).
    """

    func other(sessionId: String) -> String {
        return String(format: "You are a bot for the user. Session: %@. Now: %@", sessionId, Date.now.description)
    }

    func log() { print("The user asked at \\(Date())") }
}
'''


def test_swift_interpolations_multi_line_strings_and_string_format():
    assert found(SWIFT, ".swift") == [
        ("\\(today)", "named `today`: today's date"),
        ("\\(user.name)", "named `user.name`: a field of the user served, per user"),
        ("\\(Date().formatted(date: .complete, time: .omitted))", "calls `Date()`"),
        ("sessionId", "named `sessionId`: a session id"),
        ("Date.now.description", "calls `Date.now()`"),
    ]  # print(…) is a log line, not a prompt


JAVA_ASK = """class ChatSession {
    void loop() {
        Result<String> response = llmClient.chat(line, LocalDate.now().toString());
        logger.info(line, LocalDate.now().toString());
        cache.put(line, Instant.now());
    }
}
"""


def test_a_clock_reading_sent_to_a_model_with_the_question_enters_the_prompt():
    # a call that sends to a model; a log line or a cache entry is no prompt
    assert found(JAVA_ASK, ".java") == [("LocalDate.now().toString()", "calls `LocalDate.now()`")]


JAVA_NOT_ASKS = """class Jobs {
    void run() {
        done.complete(Instant.now());
        generateFileName(LocalDateTime.now());
        m.invoke(o, LocalDate.now());
        llmCache.put("k", Instant.now());
    }
}
"""


def test_a_future_a_file_name_a_reflective_call_or_a_cache_is_no_model():
    assert found(JAVA_NOT_ASKS, ".java") == []
