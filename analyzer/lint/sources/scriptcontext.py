"""PHP and Ruby: what the code calls a literal, and where it stands that it is no prompt.

A literal's name is the variable, property, constant, array/hash key, named argument, call or
function (a Ruby method's last expression is what it returns) it belongs to; ``trim(…)``,
``"…".strip`` / ``.freeze`` keep the text the same, so the name is looked for past them.

It does NOT take array/hash keys, index keys, comparisons, ``case``/``when``/``match`` labels, or
the text of ``echo``/``print``/``puts``, logging, errors, SQL, regexes, env and config look-ups,
string tests and date formats (:func:`skipped`); it does NOT decide what is a prompt.
"""

from __future__ import annotations

import re

from analyzer.lint.sources.promptlike import skipped_call

_SKIP = re.compile(
    r"(?:^|\.)(?:echo|print|printf|vprintf|fprintf|print_r|var_dump|var_export|error_log|trigger_error"
    r"|die|exit"
    r"|abort|puts|p|pp|warn|raise|fail|throw|dd|dump|report|logger|log\w*|Log\w*|info|notice|alert|emergency"
    r"|query|prepare|exec|execute|select|where\w*|orWhere\w*|having\w*|orderBy\w*|groupBy|selectRaw|raw"
    r"|statement|unprepared|find_by_sql|sanitize_sql\w*|mysqli_query|pg_query|pg_prepare|sql"
    r"|preg_\w+|mb_ereg\w*|Regexp\.new|scan|gsub!?|sub!?|tr|delete|squeeze|str_replace|str_ireplace|strtr"
    r"|str_contains|str_starts_with|str_ends_with|strpos|stripos|strrpos|strstr|stristr|substr_count"
    r"|in_array|array_key_exists|array_search|explode|implode|str_split|strcmp|strcasecmp|strncmp"
    r"|include\?|start_with\?|end_with\?|match\??|key\?|has_key\?|fetch|dig|env|config|getenv|putenv"
    r"|ENV\.\w+|header|setcookie|define|defined|constant|date|gmdate|strtotime|strftime|date_create\w*"
    r"|createFromFormat|format|to_date|to_time|new \w*(?:Exception|Error)|\w+Exception|\w+Error"
    r"|require\w*|load|file\w*|fopen|readfile|send|public_send|method|respond_to\?|const_get"
    r"|instance_variable_get|t|__|_e|esc_\w+)$"
)
#: calls that give back their one text argument, or a text receiver, as it is
KEEPS = frozenset(
    "trim rtrim ltrim chop strip lstrip rstrip chomp freeze squish strip_heredoc html_safe".split()
)
KEEPS |= {"dup", "to_s", "nl2br", "dedent", "unindent"}
#: methods that test or take apart a text receiver: "…".include?(x)
_TESTS = frozenset(
    "include? start_with? end_with? match? match eql? equal? casecmp casecmp? =~ split".split()
)
_TESTS |= {"each_line", "lines", "chars", "bytes", "scan", "index", "count", "unpack", "unpack1", "to_sym"}
_COMPARE = frozenset("== === != !== <> < > <= >= <=> =~ !~ instanceof".split())
_SQL = re.compile(
    r"(?is)\s*(?:SELECT\b.*\bFROM|INSERT\s+INTO|UPDATE\b.*\bSET|DELETE\s+FROM|WITH\s+\w+\s+AS)\b"
)
_SQL_NAME = re.compile(r"(?i)(?:^|[^a-z])sql")
#: ancestors that hold a string as code, not text: another literal's interpolation, a heredoc body
_CODE = frozenset(("interpolation", "heredoc_body"))


def sql(text: str, name: str = "") -> bool:
    """The text is an SQL statement (``SELECT … FROM``, ``INSERT INTO``, ``UPDATE … SET``) or is named so."""
    return bool(_SQL.match(text.lstrip("\"'%Q(<~-")) or _SQL_NAME.search(name))


def skipped(dotted: str) -> bool:
    return skipped_call(dotted) or bool(_SKIP.search(dotted))


def _key(f, node) -> str:
    return f.src(node).strip("\"':")


def context(finder, node) -> tuple[str, bool]:
    """(the name the code gives this text, whether it is no prompt by where it stands)."""
    f, g, cur = finder.f, finder.g, node
    if sql(f.src(node)):
        return "", True
    while cur.parent is not None:
        p, t = cur.parent, cur.parent.type
        if t in _CODE:
            return "", True
        if t in g.decls or t in ("augmented_assignment_expression", "operator_assignment"):
            left = p.child_by_field_name("left")
            name = f.src(left) if left is not None and left != cur else ""
            return name, not name or sql("", name)
        if t in ("property_element", "static_variable_declaration") or t == "const_element":
            name = p.child_by_field_name("name") or (p.named_children[0] if p.named_children else None)
            return (f.src(name) if name is not None and name != cur else ""), False
        if t == "array_element_initializer" or t == "pair":
            key = p.child_by_field_name("key") or (
                p.named_children[0] if len(p.named_children) == 2 else None
            )
            if key is not None:
                return ("", True) if key == cur else (_key(f, key), False)  # an array key is no prompt
        if t == "argument" and p.child_by_field_name("name") is not None:
            return f.src(p.child_by_field_name("name")), False  # PHP 8: Message(content: "…")
        if t in g.args and p.parent is not None and p.parent.type in g.calls:
            call = p.parent
            dotted = f.call_parts(call)[0]
            if dotted.rsplit(".", 1)[-1] in KEEPS:
                cur = call
                continue
            args = f.args(call)
            if dotted == "define" and len(args) == 2 and args[1].start_byte == cur.start_byte:
                return _key(f, args[0]), False  # define('SYSTEM_PROMPT', "…")
            return dotted, skipped(dotted)
        if t in g.calls:
            dotted, owner, _ = f.call_parts(p)
            if owner == cur and dotted.rsplit(".", 1)[-1] in _TESTS:
                return "", True  # "…".include?(x), "…" == x
            if owner != cur and skipped(dotted):
                return "", True  # logger.info { "…" }
        if (t in g.returns or t in g.function_types) and (got := finder.returned_name(p)) is not None:
            return got
        if t in ("binary_expression", "binary") and cur in p.named_children:
            op = p.child_by_field_name("operator")
            op_text = f.src(op) if op is not None else ""
            if op_text in _COMPARE:
                return "", True  # compared, not sent: $x === "…"
            if op_text == "<<" and p.child_by_field_name("right") == cur:
                left = p.child_by_field_name("left")
                return (f.src(left) if left is not None else ""), False  # prompt << "…"
        if t in g.skips:
            return "", True
        cur = p
    return "", False
