"""analyzer.lint.sources.builders: a prompt written piece by piece into a builder (Go strings.Builder,
Java/Kotlin StringBuilder chains, C# StringBuilder, Rust push_str) is one template."""

from __future__ import annotations

from analyzer.lint.sources import compiled
from analyzer.lint.sources.pieces import volatile_values


def found(text: str, suffix: str) -> list[tuple[str, str]]:
    ts = compiled.templates(text, suffix)
    assert ts is not None
    return [(v.value, v.reason) for t in ts for v in volatile_values(t) if v.kind != "today-phrase"]


GO = """package agent

import (
	"strings"
	"time"
)

func systemPrompt(memoryText string, question string) string {
	var b strings.Builder
	b.WriteString("You are a helpful assistant for the user.\\n")
	b.WriteString("\\n[Long-term memory]\\n")
	b.WriteString(memoryText)
	b.WriteByte('\\n')
	b.WriteString("Current time: ")
	b.WriteString(time.Now().Format(time.RFC3339))
	b.WriteString("\\nQuestion: ")
	b.WriteString(question)
	return b.String()
}
"""


def test_go_writes_to_one_builder_are_one_template():
    assert found(GO, ".go") == [
        ("memoryText", "named `memoryText`: a memory block rendered per session"),
        ("time.Now().Format(time.RFC3339)", "calls `time.Now()`"),
    ]  # `question` is the request's content; WriteByte('\n') is no piece
    (t,) = compiled.templates(GO, ".go")
    assert t.text.startswith("You are a helpful assistant") and "[Long-term memory]" in t.text


JAVA = """class P {
    String build(User user, String today, String userMessage) {
        StringBuilder sb = new StringBuilder();
        sb.append("You are a travel assistant. Today is ").append(today).append(".\\n");
        sb.append("User request: ").append(userMessage);
        return sb.toString();
    }
}
"""


def test_java_append_chains_keep_their_order_and_content_stays_unjudged():
    assert found(JAVA, ".java") == [("today", "named `today`: today's date")]


CSHARP = """public class P {
    public string Build(LibraryProfile profile, TrackInfo track) {
        var builder = new StringBuilder();
        builder.AppendLine("You are a music assistant.");
        builder.AppendLine("Now: " + DateTime.Now.ToString("HH:mm"));
        builder.AppendLine("Released: " + track.Year);
        return builder.ToString();
    }
}
"""


def test_csharp_append_line_and_a_records_date_field():
    assert found(CSHARP, ".cs") == [('DateTime.Now.ToString("HH:mm")', "calls `DateTime.Now()`")]


def test_a_builder_of_one_write_or_no_literal_is_left_to_the_rest():
    one = "package a\nfunc f(now string) string {\n\tvar b strings.Builder\n\tb.WriteString(now)\n\treturn b.String()\n}\n"
    assert found(one, ".go") == []


JAVA_HELD = '''class S {
    private static final String PROMPT = """
        You are an NBA assistant. Today's date is %s.
        User question: %s
        """;
    String build(Context c) {
        String todayIso = c.getCurrentDateTime().format(DateTimeFormatter.ofPattern("yyyy-MM-dd"));
        return PROMPT.formatted(todayIso, c.question());
    }
}
'''


def test_a_held_literal_formatted_by_name_fills_its_slots():
    assert found(JAVA_HELD, ".java") == [("todayIso", "named `todayIso`: today's date")]


KOTLIN_SCOPE = """
fun buildEnvironmentInfo(): String {
    val platform = System.getProperty("os.name")
    val todayDate = LocalDate.now()
    return buildString {
        appendLine("<env>")
        appendLine("Platform: $platform")
        appendLine("Today's date: $todayDate")
        append("</env>")
    }
}

fun log(x: String) = buildList { add("Today's date: $x") }
"""


def test_kotlin_writes_inside_build_string_without_a_receiver_are_one_builder():
    assert found(KOTLIN_SCOPE, ".kt") == [("$todayDate", "named `todayDate`: today's date")]


def test_a_write_inside_a_loop_lambda_of_build_string_is_still_the_builders():
    src = """
fun f(items: List<String>): String {
    val d = LocalDate.now()
    return buildString {
        appendLine("You are a helpful assistant for the user.")
        items.forEach { appendLine("Today: $d") }
    }
}
"""
    assert [v for v, _ in found(src, ".kt")] == ["$d"]
    (builder,) = compiled.templates(src, ".kt")  # one text, the loop's line part of it
    assert [p.text for p in builder.pieces][0].startswith("You are a helpful assistant")
