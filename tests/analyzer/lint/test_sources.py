"""analyzer.lint.sources: prompts where they live in code (Python with ``ast``, JS/TS with
tree-sitter), each volatile interpolation reported at its own line and column."""

from __future__ import annotations

import pytest

from analyzer.lint.engine import run
from analyzer.lint.inputs import load
from analyzer.lint.sources import javascript, python
from analyzer.lint.sources.pieces import volatile_values

CODES = {f"PG00{i}" for i in range(1, 10)}


def found(templates) -> list[tuple[str, str]]:
    return [(v.value, v.reason) for t in templates for v in volatile_values(t) if v.kind != "today-phrase"]


def lint_file(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    loaded = load([str(path)])
    return run(loaded, CODES), loaded.errors


def test_python_fstring_format_percent_and_concatenation():
    src = '''
import time, uuid
from datetime import datetime, date

SYSTEM_PROMPT = f"""You are Jarvis. The current time and date is {time.strftime('%c')}.
Greet {user.name} and keep answers short."""
stamp = datetime.now().isoformat()
HEADER = f"You are the planner agent. Session started at {stamp}; turn {turn_count}."
LEGACY = "Hello %s, you are using the legacy assistant. The time is %s now." % (name, datetime.now())
FORMATTED = "You plan research tasks for the team. Today is {}; goal: {goal}.".format(date.today(), goal=goal)
JOINED = "You are the shop assistant for our lamps. Session " + str(uuid.uuid4()) + ". Be brief and polite."
'''
    got = found(python.templates(src))
    assert got == [
        ("{time.strftime('%c')}", "calls `time.strftime()`"),
        ("{user.name}", "named `user.name`: a field of the user served, per user"),
        ("{stamp}", "`stamp` holds a value that calls `datetime.now()`"),
        ("{turn_count}", "named `turn_count`: per-request or per-session state"),
        ("datetime.now()", "calls `datetime.now()`"),  # the argument filling %s
        ("date.today()", "calls `date.today()`"),  # the argument filling {}
        ("str(uuid.uuid4())", "calls `uuid.uuid4()`"),
    ]


def test_python_strings_that_are_no_prompt_are_skipped():
    src = '''"""Module docstring: Current date: 2024-01-01, session 3f2b9c1e-8d4a-4e6f-9b2a-1c3d5e7f9a0b."""
import logging, re
from datetime import datetime
log = logging.getLogger(__name__)
DATE_FORMAT = "%Y-%m-%d %H:%M"
TEST_ID = "3fa85f64-5717-4562-b3fc-2c963f66afa6"
QUERY = "SELECT id FROM events WHERE created_at > '2024-01-01 00:00:00' ORDER BY id"
ISO = re.compile(r"\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}")

def run(task):
    """Run it. Current time: 14:05 in the examples."""
    log.info(f"task {task} started at {datetime.now():%H:%M:%S}")
    print(f"[{datetime.now().isoformat()}] running {task} for the user in the session")
    raise RuntimeError(f"deadline passed at {datetime.now()} for the task you asked about")
'''
    assert python.templates(src) == []


def test_js_template_literals_concatenation_and_declared_values():
    src = """
const getCurrentTime = () => new Date().toLocaleString();
export const systemPrompt = () => {
  const now = new Date().toISOString();
  return `You are an expert researcher. Today is ${now}. Cite every source you use.`;
};
export const troll = `You are a helpful assistant. Current time: ${getCurrentTime}. Be polite.`;
export function planner(goal, EXPR) {
  return `You break research goals into steps. Current date: ${EXPR}. Goal: ${goal}`;
}
let systemText = "You are a friendly shop assistant. ";
systemText += "Session " + crypto.randomUUID() + ". Recommend at most three lamps.";
console.log(`[${Date.now()}] step at ${new Date().toISOString()}`);
const q = sql`SELECT * FROM t WHERE created > ${new Date()}`;
"""
    got = found(javascript.templates(src, ".ts"))
    assert got == [
        ("${now}", "named `now`: a clock reading"),
        ("${getCurrentTime}", "named `getCurrentTime`: a clock reading"),
        ("${EXPR}", "follows `Current date`"),
        ("crypto.randomUUID()", "calls `crypto.randomUUID()`"),
    ]


@pytest.mark.parametrize("suffix", [".js", ".jsx", ".ts", ".tsx", ".mjs"])
def test_every_js_dialect_parses(suffix):
    src = "const system = `You are a travel assistant for our users. The current date is ${new Date().toDateString()}.`;\n"
    assert found(javascript.templates(src, suffix)) == [
        ("${new Date().toDateString()}", "calls `new Date()`")
    ]


def test_findings_point_at_the_interpolation_in_the_file(tmp_path):
    text = (
        '# -*- coding: utf-8 -*-\nNAME = "Zoë"\nPROMPT = (\n    "Ünïcode prompt for the assistant. "\n'
        '    f"Now: {datetime.now():%H:%M} and you help the user with the task."\n)\n'
    )
    findings, errors = lint_file(tmp_path, "p.py", text)
    assert errors == []
    (f,) = [f for f in findings if f.code == "PG004"]
    line = text.splitlines()[f.line - 1]
    assert (f.line, line[f.col - 1 : f.end_col - 1]) == (5, "{datetime.now():%H:%M}")
    assert f.message.endswith(" — calls `datetime.now()`")

    ts = "const greeting = (user) =>\n  `Welcome back, ${user.name}! Héllo — your cart has ${user.cartCount} items.`;\n"
    findings, _ = lint_file(tmp_path, "w.ts", ts)
    spans = [(f.line, ts.splitlines()[1][f.col - 1 : f.end_col - 1]) for f in findings]
    assert spans == [(2, "${user.name}"), (2, "${user.cartCount}")]

    js = 'let s = "You are a shop assistant for lamps. Today is " + new Date().toDateString() + ". Be kind.";\n'
    findings, _ = lint_file(tmp_path, "c.js", js)
    f = next(f for f in findings if f.code == "PG004")
    assert js[f.col - 1 : f.end_col - 1] == "new Date().toDateString()"


def test_a_python_file_that_does_not_parse_is_an_input_error(tmp_path):
    findings, errors = lint_file(tmp_path, "broken.py", "PROMPT = f'You are {helpful'\n")
    assert (
        findings == []
        and len(errors) == 1
        and "broken.py:1" in str(errors[0])
        and "not valid Python" in str(errors[0])
    )


def test_a_directory_scan_reads_source_files_but_never_fixes_them(tmp_path):
    (tmp_path / "agent.py").write_text('PROMPT = f"You are the agent for the team. Now: {datetime.now()}."\n')
    (tmp_path / "notes.md").write_text("Plain notes for the team.\n")
    loaded = load([str(tmp_path)])
    assert sorted(s.kind for s in loaded.files) == ["source", "text"]
    from analyzer.lint.fix import fixed_text

    src = next(s for s in loaded.files if s.kind == "source")
    assert fixed_text(src, {"PG201", "PG202"}) is None


def test_a_single_brace_slot_in_a_jinja_file_is_literal_text(tmp_path):
    text = 'The title MUST be exactly: "Report {month}/{week}"\nToday: {{ today }}\n'
    findings, _ = lint_file(tmp_path, "system.j2", text)
    assert [text.splitlines()[f.line - 1][f.col - 1 : f.end_col - 1] for f in findings] == [
        "Today",
        "{{ today }}",
    ]  # the label (PG003) and its slot
    findings, _ = lint_file(tmp_path, "system.md", text)
    assert len([f for f in findings if f.code == "PG004"]) == 3


def test_a_prompt_loader_fills_its_slots_from_its_keywords():
    src = (
        "from datetime import datetime\n"
        "def step(self, task):\n"
        "    return self.agent.read_prompt('agent.system.datetime.md', date_time=datetime.now().isoformat(),"
        " goal=task.goal)\n"
        "def other(engine):\n"
        "    return engine.load_prompt(template='check', current_value=1, language='en')\n"
    )
    assert found(python.templates(src)) == [("datetime.now().isoformat()", "calls `datetime.now()`")]


def test_a_prompt_loader_function_fills_its_slots_from_its_keywords():
    src = (
        "from datetime import datetime\n"
        "from justai import get_prompt\n"
        "now = datetime.now()\n"
        "system = get_prompt('SYSTEM', day=now.strftime('%A, %B %d'), language='nl')\n"
        "other = lookup('SYSTEM', day=now.strftime('%A'))\n"
        "page = render_template('index.html', today=datetime.now())\n"  # Flask's HTML, not a prompt
    )
    assert [v for v, _ in found(python.templates(src))] == ["now.strftime('%A, %B %d')"]


def test_a_lookup_of_a_slot_in_a_text_is_no_prompt():
    src = (
        "export function fill(p: string): string {\n"
        "  if (p.includes('{{date}}')) { p = p.replace(/{{date}}/g, new Date().toLocaleDateString()) }\n"
        "  return p\n}\n"
    )
    assert [v for v, _ in found(javascript.templates(src, ".ts"))] == ["new Date().toLocaleDateString()"]


def test_a_setting_named_expression_under_a_reading_label_is_read_per_request():
    src = (
        "export const systemPrompt = (s: State) => `You are a coding agent for the user.\n"
        "Tokens left: ${s.budget - s.used}\nToken limit: ${s.budget}\nAnswer briefly.`;\n"
    )
    assert [v for v, _ in found(javascript.templates(src, ".ts"))] == ["${s.budget - s.used}"]


def test_a_replace_keyed_by_a_template_string_or_filled_with_a_fallback():
    src = (
        "export function f(message) {\n  return SYSTEM_PROMPT\n"
        "    .replace('{{guildName}}', message.guild?.name ?? 'private')\n"
        "    .replace(`{{userId}}`, message.author.id)\n"
        "    .replace('{{motto}}', 'Be ' + kind);\n}\n"
    )
    assert [v for v, _ in found(javascript.templates(src, ".ts"))] == [
        "message.guild?.name ?? 'private'",
        "message.author.id",
    ]


def test_a_value_computed_from_a_volatile_variable_is_volatile_too():
    src = '''
def prompt_for(user):
    now = get_jst_now()
    slot = next_free_slot(now)
    slot_str = slot.strftime("%H:%M")
    label = describe(ROOMS)
    return f"""You are the meeting-room booking assistant of our office.
Next free slot: {slot_str}. Rooms: {label}.
"""
'''
    got = found(python.templates(src))
    assert [v for v, _ in got] == ["{slot_str}"]
    assert "computed from `slot`, which is computed from `now`, which calls `get_jst_now()`" in got[0][1]


def test_text_appended_to_a_prompt_is_part_of_it_and_alone_is_not():
    built = (
        "function context(thread) {\n"
        "  let info = `You are the team's assistant. Today is ${new Date().toDateString()}. `;\n"
        "  info += `This thread has ${thread.sessionId} open. `;\n"
        "  return info;\n"
        "}\n"
    )
    assert [v for v, _ in found(javascript.templates(built))] == [
        "${new Date().toDateString()}",
        "${thread.sessionId}",
    ]
    alone = "let note = '';\nnote += `Saved ${thread.sessionId} ok`;\nconsole.log(note);\n"
    assert found(javascript.templates(alone)) == []
