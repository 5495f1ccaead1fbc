"""Python: where a volatile value enters a prompt other than inside a literal, one template each.

A slot filled by a call (``.replace("{{DATE}}", value)``, ``.format(today=…)``, ``.render(now=…)``,
``partial_variables={"today": get_today}``, a render dict ``{"today": datetime.now()…}`` or one key of it
(``template_data["date"] = date.today()…``), a map keyed
by slots ``{"{date}": …}``), a value appended to a prompt (``prompt += now()``, an element of a list of
prompt parts that is joined), and the bare word a ``.replace`` fills in its literal ("Heute ist der
DATUM" ….replace("DATUM", date)). :func:`prompt_vars` names the variables that hold prompt text.
It does NOT find literals (:mod:`.python`) nor judge text.
"""

from __future__ import annotations

import ast
import re

from analyzer.detection.names import Verdict, name_verdict
from analyzer.lint.sources.pieces import Piece, Template
from analyzer.lint.sources.promptlike import prompt_named
from analyzer.lint.sources.pyfile import PyFile, dotted, is_str, is_text

#: calls that fill a template's slots from their keywords (and dict arguments)
FILLS = {"format", "format_map", "render", "substitute", "safe_substitute", "partial", "format_messages"}
FILLS |= {"format_prompt", "invoke", "ainvoke", "render_async"}
#: … and calls named for loading a prompt template with its values (``read_prompt("x.md", date=…)``)
_LOADS = re.compile(r"(?i)^(?:load|read|get|render|build|make|fill)_?(?:system_?)?(?:prompt|template)s?$")
_SIGILS = "{}$%#<>[]() "
#: a key shaped like a slot ("{current_date}", "{{DATE}}", "%TIME%", "[[NOW]]")
SLOT_KEY = re.compile(r"\{\{?\s*[\w.]+\s*\}?\}|\$\{[\w.]+\}|%[\w.]+%|\[\[[\w.]+\]\]")
#: a dict assigned to one of these names holds a template's values ("render_vars", "context")
_RENDER_VARS = re.compile(r"(?i)var|context|input|param|render|template|prompt|values|fields|kwargs")


def _constant(node: ast.AST, consts: dict[str, str]) -> object:
    """A constant's value, or the string a module-level name holds (None for another name)."""
    return node.value if isinstance(node, ast.Constant) else consts.get(node.id)


def _key_verdict(key: str) -> Verdict | None:
    bare = key.strip(_SIGILS)
    return name_verdict(bare) if bare else None


def prompt_vars(f: PyFile) -> set[str]:
    """Variables holding prompt text: assigned a string, a template or a prompt-named name, or
    assigned inside a prompt-named function (``build_system_prompt``)."""
    out: set[str] = set()
    for fn in ast.walk(f.tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and prompt_named(fn.name):
            out.update(
                t.id
                for n in ast.walk(fn)
                if isinstance(n, ast.Assign)
                for t in n.targets
                if isinstance(t, ast.Name)
            )
    for n in ast.walk(f.tree):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            v = n.value
            if is_text(v) or (isinstance(v, (ast.Name, ast.Attribute)) and prompt_named(ast.unparse(v))):
                out.add(n.targets[0].id)
    return out


def _one(f: PyFile, node: ast.AST, v: Verdict, name: str) -> Template:
    return Template([f.interpolation_with(node, v)], name)


#: a prompt-named format that locates something rather than saying it (PROMPT_FILE, PROMPT_CACHE_KEY)
_LOCATOR = re.compile(r"(?i)(?:file|path|dir|key|url|uri|pattern|name|id)s?$")


def _parameter(f: PyFile, node: ast.AST) -> bool:
    """``node`` is a bare parameter of its function: what the caller passes, the request's content."""
    fn = f.parents.get(node)
    while fn is not None and not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        fn = f.parents.get(fn)
    if not isinstance(node, ast.Name) or fn is None:
        return False
    a = fn.args
    return node.id in {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]}


def _receiver_literal(node: ast.AST) -> ast.AST | None:
    """The string a chain of ``.replace`` (and wrapping calls like ``dedent(…)``) starts from."""
    while True:
        if is_str(node):
            return node
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "replace"
        ):
            node = node.func.value
        elif isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
            node = node.args[0]
        else:
            return None


def slot_templates(f: PyFile, pvars: set[str]) -> list[Template]:
    out: list[Template] = []
    joined = {
        a.id
        for n in ast.walk(f.tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "join"
        for a in n.args
        if isinstance(a, ast.Name)
    }
    consts = {  # module-level names of string constants: DATE_SLOT = "{{CURRENT_DATE}}"
        t.id: st.value.value
        for st in f.tree.body
        if isinstance(st, ast.Assign)
        and isinstance(st.value, ast.Constant)
        and isinstance(st.value.value, str)
        for t in st.targets
        if isinstance(t, ast.Name)
    }
    for n in ast.walk(f.tree):
        for k in n.keywords if isinstance(n, ast.Call) else ():
            partials = k.value if k.arg == "partial_variables" else None  # LangChain: filled at format time
            if isinstance(partials, ast.Dict):
                out += _dict_values(f, partials, strict=False)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            attr = n.func.attr
            if attr == "replace" and len(n.args) == 2 and isinstance(n.args[0], (ast.Constant, ast.Name)):
                key, value = _constant(n.args[0], consts), n.args[1]  # "{{DATE}}", or DATE_SLOT = "{{DATE}}"
                if not isinstance(key, str):
                    continue
                v = f.verdict(value) or _key_verdict(key)
                if v is None:
                    continue
                base = _receiver_literal(n.func.value)
                if base is not None and key.strip(_SIGILS) == key:  # a bare word in the literal
                    pieces = [
                        Piece(key, start=p.offsets[i], verdict=v)
                        for p in f.literal_pieces(base) or []
                        if p.literal
                        for i in _find_all(p.text, key)
                    ]
                    if pieces:
                        out.append(Template(pieces, "replace"))
                if not is_text(value):
                    out.append(_one(f, value, v, "replace"))
            elif attr in FILLS or _LOADS.match(attr):
                out += _keyword_fills(f, n, attr)
                receiver = dotted(n.func.value) if not is_str(n.func.value) else ""
                positional = attr == "format" and prompt_named(receiver) and not _LOCATOR.search(receiver)
                for a in n.args:
                    if isinstance(a, ast.Dict):
                        out += _dict_values(f, a, strict=False)
                    elif positional and not _parameter(f, a) and (v := f.verdict(a)) and not is_text(a):
                        out.append(_one(f, a, v, attr))  # PROMPT.format(now.strftime(…)): fills a "{}"
            if attr == "append" and isinstance(n.func.value, ast.Name) and n.func.value.id in joined:
                out += _parts(f, n.args)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and _prompt_loader(n.func.id):
            out += _keyword_fills(f, n, n.func.id)  # get_prompt("SYSTEM", day=now.strftime(…)): a function
        elif isinstance(n, ast.Dict) and any(_slot_key(k) for k in n.keys):
            out += _dict_values(f, n, strict=False)  # {"{current_date}": …}: a map that fills slots
        elif isinstance(n, ast.Dict) and _RENDER_VARS.search(_assigned_to(f, n)):
            out += _dict_values(f, n, strict=True)
        elif isinstance(n, (ast.List, ast.Tuple)):
            parent = f.parents.get(n)
            if (
                isinstance(parent, ast.Call)
                and isinstance(parent.func, ast.Attribute)
                and parent.func.attr == "join"
            ) or (
                isinstance(parent, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id in joined for t in parent.targets)
            ):
                out += _parts(f, n.elts)
        elif (
            isinstance(n, ast.Assign) and (key := _render_key(n.targets)) is not None and not is_text(n.value)
        ):
            kv = _key_verdict(key)  # template_data["date"] = date.today()…: the strict dict's rule, one key
            v = f.verdict(n.value, calls_only=True)
            if v and kv:
                out.append(_one(f, n.value, v, "render"))
        elif isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add) and isinstance(n.target, ast.Name):
            if n.target.id in pvars and not is_text(n.value):
                v = f.verdict(n.value)
                if v:
                    out.append(_one(f, n.value, v, n.target.id))
    return out


def _prompt_loader(name: str) -> bool:
    """A free function named for loading a prompt (``get_prompt``, ``load_system_prompt``), not a
    template of any kind (Flask's ``render_template``, ``get_template`` render HTML and e-mails)."""
    return bool(_LOADS.match(name)) and "prompt" in name.lower()


def _keyword_fills(f: PyFile, call: ast.Call, name: str) -> list[Template]:
    """The keyword arguments of a call that fills a template's slots, each that is volatile."""
    out = []
    for k in call.keywords:
        v = f.verdict(k.value) or (_key_verdict(k.arg) if k.arg else None)
        if k.arg and v and not is_text(k.value):
            out.append(_one(f, k.value, v, name))
    return out


def _parts(f: PyFile, elts: list[ast.AST]) -> list[Template]:
    """Non-literal prompt parts (``get_date_prompt()``) volatile by what they call or name."""
    out = []
    for e in elts:
        if isinstance(e, (ast.Call, ast.Subscript)) and not is_text(e):
            v = f.verdict(e)
            if v:
                out.append(_one(f, e, v, "prompt part"))
    return out


def _dict_values(f: PyFile, d: ast.Dict, strict: bool) -> list[Template]:
    """A render dict's volatile values; ``strict`` (a dict anywhere): its key must say so too and its value call it."""
    out = []
    for k, val in zip(d.keys, d.values):
        if not (isinstance(k, ast.Constant) and isinstance(k.value, str)) or is_text(val):
            continue
        kv = _key_verdict(k.value)
        v = f.verdict(val, calls_only=strict) or (None if strict else kv)
        if v and (kv or not strict):
            out.append(_one(f, val, v, "render"))
    return out


def _render_key(targets: list[ast.AST]) -> str | None:
    """The string key of ``values["date"] = …`` when the dict is named as a template's values."""
    if (
        len(targets) != 1
        or not isinstance(t := targets[0], ast.Subscript)
        or not isinstance(t.value, ast.Name)
    ):
        return None
    key = t.slice
    if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and _RENDER_VARS.search(t.value.id)):
        return None
    return key.value


def _slot_key(k: ast.AST | None) -> bool:
    return isinstance(k, ast.Constant) and isinstance(k.value, str) and bool(SLOT_KEY.fullmatch(k.value))


def _assigned_to(f: PyFile, node: ast.AST) -> str:
    p = f.parents.get(node)
    if isinstance(p, ast.Assign) and len(p.targets) == 1 and isinstance(p.targets[0], ast.Name):
        return p.targets[0].id
    if isinstance(p, ast.AnnAssign) and isinstance(p.target, ast.Name):  # template_vars: dict[…] = {…}
        return p.target.id
    return ""


def _find_all(text: str, word: str) -> list[int]:
    out, k = [], text.find(word)
    while k >= 0:
        before, after = text[k - 1 : k], text[k + len(word) : k + len(word) + 1]
        if not (before.isalnum() or before == "_" or after.isalnum() or after == "_"):
            out.append(k)
        k = text.find(word, k + len(word))
    return out
