"""analyzer.lint.sources.pyslots and .jsslots: volatile values that enter a prompt outside a
literal (a slot filled by a call, parts joined, ``+=``), found and not found."""

from __future__ import annotations

from analyzer.detect import find_volatile
from analyzer.lint.sources import javascript, python
from analyzer.lint.sources.pieces import volatile_values


def values(templates) -> list[str]:
    return [v.value for t in templates for v in volatile_values(t) if v.kind != "today-phrase"]


def test_python_fills_joins_and_appends():
    src = '''
from datetime import datetime
from textwrap import dedent

def sysprompt(date, time):
    return dedent("""Du bist Dobbi, ein hilfreicher Hauself.
Heute ist der DATUM und es ist ZEIT.""").replace("DATUM", date).replace("ZEIT", time)

def build_prompt():
    parts = [RULES, EXAMPLES, get_date_prompt()]
    return "\\n\\n".join(parts)

def build_system_prompt():
    value = SELF_PROMPT
    value += "\\n\\n" + datetime.now().strftime(DATE_PROMPT)
    return value

out = BASE.replace("{{CURRENT_DATE}}", datetime.now().strftime("%Y-%m-%d")).replace("{{CWD}}", cwd)
msg = PROMPT.format(time_stamp=stamp, question=question)
render_vars = {"today": datetime.now().strftime("%d %B %Y"), "goal": goal}
HEADERS = {"X-Request-Id": str(uuid.uuid4())}
'''
    got = values(python.templates(src))
    for expected in (
        "DATUM",
        "ZEIT",
        "date",
        "time",
        "get_date_prompt()",
        "datetime.now().strftime(DATE_PROMPT)",
    ):
        assert expected in got, (expected, got)
    assert 'datetime.now().strftime("%Y-%m-%d")' in got and "stamp" in got
    assert 'datetime.now().strftime("%d %B %Y")' in got
    assert not {"cwd", "question", "goal", "str(uuid.uuid4())", "RULES"} & set(got)


def test_an_interpolation_alone_under_a_header_about_git_is_the_working_copys_state():
    src = """
def git_context(self):
    log = self._run_git(["log", "--oneline"])
    parts = [f"Current branch: {branch}"]
    parts.append(f"\\nRecent commits:\\n{log}")
    parts.append(f"\\nNotes:\\n{log}")
    parts.append(f"\\nRecent commits: see {log}")
    return "\\n".join(parts)
"""
    assert values(python.templates(src)) == ["{branch}", "{log}"]


def test_a_literal_with_a_labelled_slot_is_a_prompt_whatever_it_is_passed_to():
    src = 'agent = Agent("Current time is {{now}}")\nlabel = Label("{{now}}")\n'
    assert values(python.templates(src)) == ["{{now}}"]


def test_javascript_replace_value_and_appended_values():
    src = """
const prompt = base
  .replace("{{PLATFORM_NAME}}", platform)
  .replace("{{CURRENT_DATE}}", new Date().toLocaleDateString());
let details = `You are a coding agent.`;
details += getCurrentTime();
details += workspaceName;
"""
    got = values(javascript.templates(src, ".ts"))
    assert "new Date().toLocaleDateString()" in got and "getCurrentTime()" in got
    assert "platform" not in got and "workspaceName" not in got


def test_jinja_concatenation_in_a_statement():
    text = '{%- set today = strftime_now("%Y-%m-%d") %}\n{%- set msg = "You are Mistral. The current date is " + today + "." %}'
    found = [(v.kind, v.value) for v in find_volatile(text)]
    assert ("placeholder", "today") in found
    assert find_volatile('{%- set msg = "Hello " + model_name + "." %}') == []


def test_maps_keyed_by_slots_fill_a_template():
    py = 'now = datetime.now()\nREPLACEMENTS = {"{current_date}": now.strftime("%Y-%m-%d"), "{model}": model}\n'
    assert values(python.templates(py)) == ['now.strftime("%Y-%m-%d")']
    js = (
        'const d = new Date()\nconst map = {"{current_year}": d.getFullYear().toString(), "{model}": model}\n'
    )
    assert values(javascript.templates(js, ".ts")) == ["d.getFullYear().toString()"]
    plain = 'const labels = {"title": d.getFullYear().toString(), "name": model}\n'
    assert values(javascript.templates(plain, ".ts")) == []


def test_parts_of_a_string_join_are_prompt_text():
    src = 'def reminder(current_date):\n    return "\\n".join(["<system-reminder>", f"<current_date>{current_date}</current_date>"])\n'
    assert values(python.templates(src)) == ["{current_date}"]
    path = 'p = os.path.join(root, f"{current_date}.log")\n'
    assert values(python.templates(path)) == []


def test_a_strftime_format_that_is_prose_is_a_prompt_line():
    assert values(python.templates('date = datetime.now().strftime("The current date is %Y-%m-%d.")\n')) == [
        "%Y-%m-%d"
    ]
    assert values(python.templates('stamp = datetime.now().strftime("%Y-%m-%d")\n')) == []


def test_keys_fields_and_loop_items_in_fields():
    src = """
def build(ctx, memories):
    result = "You are the assistant."
    result += f"\\n- Sender ID: {ctx.get('user_id', 'unknown')}"
    result += f"\\n- Channel: {ctx.get('channel')}"
    for memory in memories:
        result += f"\\n- {memory}"
    return result
"""
    assert values(python.templates(src)) == ["{ctx.get('user_id', 'unknown')}"]
    js = 'export const p = (h) => `About the origin of the request:\\n- city: ${h.city}\\n- city: ${requestHints.city}\\n- id: ${h["user_id"]}\\n`;\n'
    assert values(javascript.templates(js, ".ts")) == ["${requestHints.city}", '${h["user_id"]}']


def test_keys_looked_up_in_configuration_are_settings():
    src = """
def build(ctx, settings):
    result = "You are the assistant."
    result += f"\\n- Sender ID: {settings['user_id']}"
    result += f"\\n- Owner: {self.config.get('user_id')}"
    result += f"\\n- Caller: {ctx['user_id']}"
    return result
"""
    assert values(python.templates(src)) == ["{ctx['user_id']}"]
    js = 'export const p = (h) => `- id: ${config["user_id"]}\\n- id: ${h["user_id"]}\\n`;\n'
    assert values(javascript.templates(js, ".ts")) == ['${h["user_id"]}']


def test_a_working_copy_interpolation_after_a_git_label():
    js = "const branch = await git.branch()\n$`The current branch is ${branch}.`\n$`The default branch is ${main}.`\n"
    assert values(javascript.templates(js, ".mts")) == ["${branch}"]
    py = 'def p(branch, office):\n    return f"The current branch is {branch}. Branch office: {office}."\n'
    assert values(python.templates(py)) == ["{branch}"]


def test_a_tagged_template_is_a_prompt_unless_its_tag_is_code():
    js = "const date = new Date()\n$`- Today is ${date.toDateString()}.`\nsql`SELECT * FROM t WHERE d = ${date.toDateString()}`\n"
    assert values(javascript.templates(js, ".mts")) == ["${date.toDateString()}"]


def test_javascript_values_of_the_object_a_template_is_rendered_with():
    src = """
const tpl = Handlebars.compile(SYSTEM_TEMPLATE);
const a = tpl({ date: new Date().toISOString(), question: req.body.q, brand: "Acme" });
const b = await promptTemplate.format({ current_date: new Date().toLocaleDateString(), input });
const c = await chain.invoke({ currentDate, input: question });
const d = Handlebars.compile(SYSTEM_TPL)({ today: dayjs().format("YYYY-MM-DD"), count: 3 });
const g = Handlebars.compile(T)({ today: dayjs().format("YYYY-MM-DD") });
res.render("index", { now: new Date(), user: req.user.name });
nunjucks.render("email.html", { sentAt: new Date() });
const e = await tool.invoke({ timestamp: Date.now() });
const f = logger.info({ at: Date.now() });
"""
    got = values(javascript.templates(src, ".ts"))
    assert got == [
        "new Date().toISOString()",
        "new Date().toLocaleDateString()",
        "currentDate",
        'dayjs().format("YYYY-MM-DD")',
    ]


def test_javascript_format_with_an_object_renders_a_template_whatever_its_receiver():
    src = """
const m = await currentPreset.input.format({ history: recent.join("\\n"), time: formatTimestamp(new Date()) }, renderer, { session });
const n = moment().format("YYYY-MM-DD");
const o = new Intl.DateTimeFormat("en").format(new Date());
"""
    # the first object holds the values; a later one ({ session }) is the renderer's options
    assert values(javascript.templates(src, ".ts")) == ["formatTimestamp(new Date())"]


def test_javascript_values_of_an_object_named_for_a_templates_values_where_slots_are_replaced():
    src = """
const now = new Date();
const variables = { date: now.toLocaleDateString("fr-FR"), iso: now.toISOString(), brand: "Acme" };
const record = { createdAt: now.toISOString() };
const promptVars = { today: new Date().toDateString() };
Object.entries(variables).forEach(([k, v]) => { p = p.replace(`{${k}}`, v); });
"""
    got = values(javascript.templates(src, ".ts"))
    assert got == ['now.toLocaleDateString("fr-FR")', "now.toISOString()", "new Date().toDateString()"]
    # no slot filled with .replace in the file: an object of values is data, not a template's
    assert values(javascript.templates(src.replace("p.replace", "p.concat"), ".ts")) == []
    data = 'const values = { createdAt: new Date().toISOString() }; db.insert("e", values); t.replace(/ /g, "-");'
    assert values(javascript.templates(data, ".js")) == []  # a .replace that fills no slot


def test_javascript_items_of_a_chat_history_mapped_into_a_prompt_are_content():
    src = """
let system = `You are a QQ bot. Today is ${new Date().toLocaleDateString()}.`
system += chats.map(chat => {
  let sender = chat.sender || {}
  return `【${sender.nickname}】(qq: ${sender.user_id}) ${formatDate(new Date(chat.time * 1000))}: ${chat.text}`
}).join("\\n")
system += `Members: ${users.map(u => `${u.name} (${u.userId})`).join(", ")}`
"""
    got = values(javascript.templates(src, ".ts"))
    assert got == [
        "${new Date().toLocaleDateString()}",
        '${users.map(u => `${u.name} (${u.userId})`).join(", ")}',
    ]


def test_a_javascript_template_held_whole_in_another_templates_substitution_is_read():
    src = (
        "q = `${`You are a chatbot. It is currently ${new Date().toISOString()}. Answer: ${basePrompt}`}`;\n"
    )
    assert values(javascript.templates(src, ".tsx")) == ["${new Date().toISOString()}"]
    assert values(javascript.templates("q = `${name}`;\n", ".ts")) == []


def test_names_of_an_environment_block_or_the_users_profile():
    from analyzer.detection.names import name_verdict

    for name in (
        "getEnvironmentInfo",
        "envDetails",
        "workspaceMetadata",
        "userDetails",
        "renderUserProfile",
        "user_info",
    ):
        assert name_verdict(name) is not None, name
    for name in ("userInput", "user_role", "environmentName", "workspaceName", "systemPrompt"):
        assert name_verdict(name) is None, name


def test_langchain_partial_variables_fill_the_template_at_format_time():
    src = """
prompt = PromptTemplate(
    template="Today is {today}. List {n} people born today.",
    input_variables=["n"],
    partial_variables={"today": get_today, "style": STYLE},
)
other = Template(partials={"today": get_today})
"""
    got = values(python.templates(src))
    assert got.count("get_today") == 1 and "STYLE" not in got


def test_a_period_bound_in_code_on_a_line_naming_a_period_counted_back_from_today():
    from analyzer.lint.sources import compiled

    src = """public static class P {
  public static string News(DateTime sinceDate, DateTime startDate, string data) {
    return $@"You are a news bot.
- Only include releases published in the last 24 hours (since {sinceDate:yyyy-MM-dd HH:mm:ss} UTC)
- Only include releases from the past 7 days (from {startDate} on)
- The conference started on {startDate} in Lisbon.
- Data: {data}";
  }
}"""
    found = [v for t in compiled.templates(src, ".cs") for v in volatile_values(t)]
    assert [(v.value, v.reason) for v in found] == [
        ("{sinceDate:yyyy-MM-dd HH:mm:ss}", "the bound of a period counted back from today"),
        ("{startDate}", "the bound of a period counted back from today"),
    ]


def test_a_date_or_id_written_in_a_code_literal_is_fixed_text_but_its_slots_are_not():
    src = """
PROMPT_A = "Current metrics (2025-11-07 14:35:22): CPU usage: 52%, session 3f2b9c1e-8d4a-4e6f-9b2a-1c3d5e7f9a01. Answer the user."
PROMPT = f"Today is {datetime.now():%Y-%m-%d}. Reply to {user_name}."
"""
    got = values(python.templates(src))
    assert "2025-11-07 14:35:22" not in got and "52%" not in got
    assert any("datetime.now()" in v for v in got) and any("user_name" in v for v in got)


def test_a_positional_slot_under_a_git_label_is_judged_by_the_argument_that_fills_it():
    from analyzer.lint.sources import compiled

    src = """package p

func build(sb *strings.Builder, branch []byte, title string) {
	fmt.Fprintf(sb, "You are a shell assistant.\\n- Git branch: %s\\n", strings.TrimSpace(string(branch)))
	fmt.Fprintf(sb, "You are a shell assistant.\\n- Git branch: %s\\n", strings.TrimSpace(title))
}
"""
    found = [v.value for t in compiled.templates(src, ".go") for v in volatile_values(t)]
    assert found == ["strings.TrimSpace(string(branch))"]


def test_positional_format_arguments_fill_a_prompt_held_elsewhere():
    src = """
from datetime import datetime
from prompts import tooled_system_prompt, log_line

def build(name, items):
    now = datetime.now()
    a = tooled_system_prompt.format(now.strftime('%A, %B %d, %Y'), name, items)
    b = log_line.format(now.strftime('%A'))
    c = "Today is {}.".format(now.strftime('%d %B'))
    return a, b, c
"""
    # a prompt-named template (imported) or a literal: its "{}" is filled by the argument, once; another
    # name's .format is no prompt
    assert values(python.templates(src)) == ["now.strftime('%A, %B %d, %Y')", "now.strftime('%d %B')"]


def test_a_bare_parameter_passed_to_a_held_prompt_is_the_callers_content():
    src = """
def user_prompt(location, date, units):
    return data_processor_user_prompt.format(location, date, units)
"""
    assert values(python.templates(src)) == []


def test_replace_keyed_by_a_module_constant_holding_the_slot():
    src = """
from datetime import datetime
CURRENT_DATE_VARIABLE = "{{CURRENT_DATE}}"
LABEL = "Name"

def get_prompt(path):
    with open(path) as prompt:
        current_date = datetime.today().date().isoformat()
        return prompt.read().replace(CURRENT_DATE_VARIABLE, current_date).replace(LABEL, path)
"""
    assert values(python.templates(src)) == ["current_date"]


def test_a_js_default_or_guard_yields_the_literal_a_comparison_does_not():
    src = """
const config = { SYSTEM_PROMPT: process.env.SYSTEM_PROMPT || "You are a helpful bot. Today is {CURR_DATE}." };
const extra = isVip && `The user's id is ${user.id}.`;
if (mode === "Today is {CURR_DATE}.") { run(); }
"""
    assert values(javascript.templates(src, ".ts")) == ["{CURR_DATE}", "${user.id}"]


def test_a_prompt_named_format_that_locates_something_is_no_prompt():
    src = """
from datetime import date, datetime
PROMPT_FILE = "prompts/{}.md"
PROMPT_CACHE_KEY = "prompt:{}"

def load():
    return open(PROMPT_FILE.format(date.today())).read(), PROMPT_CACHE_KEY.format(datetime.now().timestamp())
"""
    assert values(python.templates(src)) == []


def test_a_formatted_value_interpolated_whole_in_a_prompt_is_found_there_not_in_its_parts():
    src = """
const now = new Date();
const currentParts = { weekday: now.toLocaleString('id-ID', { weekday: 'long' }), hour: now.getHours() };
const stamp = `${currentParts.weekday}, ${currentParts.day}-${currentParts.month} Jam ${currentParts.hour}:${currentParts.minute}`;
const prompt = `Anda adalah bot pengingat.\\n- Waktu: ${stamp} WIB`;
const labelled = `当前准确时间是：${currentParts.hour}`;
const other = `Kamu asisten.\\n${labelled}`;
"""
    # the value where it enters the prompt, not its parts; a text with its own label is prompt text
    assert values(javascript.templates(src, ".js")) == ["${stamp}", "${currentParts.hour}"]


def test_python_a_key_looked_up_in_the_person_served_is_their_field():
    py = 'perfil = load()\ncontexto = f"""\nCLIENTE: {perfil["nome"]}, {perfil["idade"]} anos\nPRODUTOS: {catalogo["nome"]}\n"""\n'
    assert values(python.templates(py)) == ['{perfil["nome"]}', '{perfil["idade"]}']


def test_python_one_key_of_a_templates_values_set_by_subscript():
    py = (
        "def generate(self, template_data=None):\n"
        "    template_data = template_data or {}\n"
        '    template_data["date"] = date.today().strftime("%A %B %d, %Y")\n'
        '    template_data["title"] = date.today().strftime("%Y")\n'
        '    cache["date"] = date.today()\n'
        "    return self._template.render(template_data)\n"
    )
    # the key must name the value and the dict a template's values (a cache is no template's)
    assert values(python.templates(py)) == ['date.today().strftime("%A %B %d, %Y")']


def test_javascript_a_choice_between_two_written_out_texts_is_no_value():
    src = "const p = `You are a coach. ${user.displayName} ha${user.displayName ? 've' : 's'} goals: ${appUser.recoveryGoals.join(', ')}.`;"
    # the name and the goals are the user's; the suffix is one of two fixed texts
    assert values(javascript.templates(src, ".ts")) == [
        "${user.displayName}",
        "${appUser.recoveryGoals.join(', ')}",
    ]


def test_python_an_annotated_render_dict_fills_its_slots():
    py = 'def build(context):\n    template_vars: dict[str, str] = {\n        "user_prompt": context.user_prompt,\n        "current_datetime": get_current_datetime_with_timezone(),\n    }\n    return template.render(**template_vars)\n'
    assert values(python.templates(py)) == ["get_current_datetime_with_timezone()"]
