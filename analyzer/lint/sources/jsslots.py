"""JavaScript/TypeScript: where a volatile value enters a prompt other than inside a literal.

The value argument of ``.replace("{{CURRENT_DATE}}", new Date()…)`` / ``.replaceAll`` (a string or
regex key), a value of a map keyed by slots (``{"{current_date}": now.toLocaleString()}``) and a
non-literal appended to a prompt variable (``prompt += now()``), and a value of the object a
template is rendered with (``prompt.format({ date: new Date()… })``, ``Handlebars.compile(t)({…})``,
``chain.invoke({ currentDate })``) or that names itself so in a file filling slots with ``.replace``
(``const variables = { date: now.toLocaleDateString() }``), one template each. It does NOT find literals
(:mod:`.javascript`) nor judge text.
"""

from __future__ import annotations

import re

from analyzer.detection.names import Verdict, name_verdict
from analyzer.lint.sources.pieces import Piece, Template
from analyzer.lint.sources.promptlike import prompt_named

_TEXT = ("string", "template_string", "binary_expression")
#: a key shaped like a slot ("{current_date}", "{{DATE}}", "%TIME%"): its map fills a template
_SLOT_KEY = re.compile(r"""["'`](?:\{\{?\s*[\w.]+\s*\}?\}|\$\{[\w.]+\}|%[\w.]+%|\[\[[\w.]+\]\])["'`]$""")
_SIGILS = "{}$%#<>[]()/\\g "


#: methods that render a template with an object of values, on a prompt, chain or template
_RENDERS = frozenset(("format", "formatMessages", "formatPromptValue", "render", "renderString", "partial"))
_RENDERS |= {"fill", "interpolate", "compile"}
#: … those given only the object of values: dates and numbers format with a pattern or nothing
_FORMATS = frozenset(("format", "formatMessages", "formatPromptValue"))
#: … and those that run one ("chain.invoke({…})", not "tool.invoke" nor Express's "res.render")
_RUNS = frozenset(("invoke", "stream", "call", "run", "batch"))
_PROMPTISH = re.compile(r"(?i)prompt|chain|template|tpl|llm|runnable|system|instruction")
#: a function that is a compiled template ("tpl({…})", "render({…})")
_RENDER_FN = re.compile(r"(?i)^(?:render|template|tpl|compiled|fill|interpolate)\w*$")


def _renders(f, fn) -> bool:
    """The call's function renders a template with the object it is given."""
    if fn.type == "identifier":
        return bool(_RENDER_FN.match(f.src(fn)))
    if fn.type == "call_expression":  # Handlebars.compile(SYSTEM_TEMPLATE)({…})
        inner, args = fn.child_by_field_name("function"), fn.child_by_field_name("arguments")
        template = args.named_children[0] if args is not None and args.named_children else None
        return (
            inner is not None
            and f.src(inner).rsplit(".", 1)[-1] in _RENDERS
            and template is not None
            and bool(_PROMPTISH.search(f.src(template)))
        )
    if fn.type != "member_expression":
        return False
    prop, obj = fn.child_by_field_name("property"), fn.child_by_field_name("object")
    name = f.src(prop) if prop is not None else ""
    if not (name in _RENDERS or name in _RUNS) or obj is None:
        return False
    args = fn.parent.child_by_field_name("arguments") if fn.parent is not None else None
    template = args.named_children[0] if args is not None and args.named_children else None
    if name in _FORMATS and template is not None and template.type == "object":
        return True  # preset.input.format({ time: … }): only a template formats with an object of values
    # the receiver or the template names a prompt: chain.invoke({…}), mustache.render(systemPrompt, {…})
    return bool(_PROMPTISH.search(f.src(obj))) or (
        template is not None and template.type != "object" and bool(_PROMPTISH.search(f.src(template)))
    )


def _render_values(f, obj) -> list[Template]:
    """The volatile values of an object a template is rendered with."""
    out = []
    for pair in obj.named_children:
        if pair.type == "shorthand_property_identifier":
            key = value = pair
        elif pair.type == "pair":
            key, value = pair.child_by_field_name("key"), pair.child_by_field_name("value")
        else:
            continue
        if key is None or value is None or value.type in _TEXT or value.type in ("number", "true", "false"):
            continue
        v = f.verdict(value) or _key_verdict(f.src(key))
        if v:
            out.append(Template([Piece(f.src(value), start=f.char(value.start_byte), verdict=v)], "render"))
    return out


def _text(f, node) -> bool:
    """A literal or a ``+`` chain: text itself (``a ?? 'private'`` is a value with a fallback)."""
    if node.type == "binary_expression":
        return f.src(node.child_by_field_name("operator")) == "+"
    return node.type in _TEXT


def _key_verdict(key: str) -> Verdict | None:
    bare = key.strip("'\"`").strip(_SIGILS)
    return name_verdict(bare) if bare.replace("_", "").isalnum() else None


#: an object of a template's values, named so ("const variables = {date: now.toLocaleDateString()}"),
#: in a file that fills slots with ``.replace``
_VALUES_NAME = re.compile(
    r"(?i)^(?:\w*(?:prompt|template|tpl)\w*)?(?:variables|vars|replacements|placeholders|substitutions|values)$"
)


#: a ``.replace`` whose key is a slot or a pattern built for one ("{{date}}", /\{\{date\}\}/, new RegExp)
_FILLS = re.compile(
    r"""\.replace(?:All)?\(\s*(?:new RegExp|/[^/\n]*(?:\\\{|\{\{|%)|[`'"][^`'"\n]*(?:\{|%\w))"""
    r"""|new RegExp\(\s*[`'"][^`'"\n]*\{"""  # a pattern built for a slot, then passed to .replace
)


def slot_templates(f) -> list[Template]:
    """``f`` is a parsed :class:`.javascript._File`."""
    out: list[Template] = []
    declared_text = set()
    fills = _FILLS.search(f.text) is not None
    for n in f.walk(f.tree.root_node):
        if n.type == "variable_declarator":
            name, value = n.child_by_field_name("name"), n.child_by_field_name("value")
            if name is not None and value is not None and value.type in _TEXT:
                declared_text.add(f.src(name))
            elif fills and name is not None and value is not None and value.type == "object":
                if _VALUES_NAME.match(f.src(name)):
                    out += _render_values(f, value)
    for n in f.walk(f.tree.root_node):
        if n.type == "call_expression":
            fn, args = n.child_by_field_name("function"), n.child_by_field_name("arguments")
            if fn is not None and args is not None and _renders(f, fn):
                values = next((a for a in args.named_children if a.type == "object"), None)
                if values is not None:  # the first object holds the values; any after it, options
                    out += _render_values(f, values)
            if fn is None or args is None or fn.type != "member_expression":
                continue
            prop = fn.child_by_field_name("property")
            if prop is None or f.src(prop) not in ("replace", "replaceAll") or len(args.named_children) != 2:
                continue
            key, value = args.named_children
            plain_key = (
                key.type in ("string", "regex")
                or key.type == "template_string"
                and not any(c.type == "template_substitution" for c in key.named_children)
            )
            if _text(f, value) or not plain_key:
                continue
            v = f.verdict(value) or _key_verdict(f.src(key))
            if v:
                out.append(
                    Template([Piece(f.src(value), start=f.char(value.start_byte), verdict=v)], "replace")
                )
        elif n.type == "pair" and _SLOT_KEY.match(f.src(n.child_by_field_name("key") or n)):
            key, value = n.child_by_field_name("key"), n.child_by_field_name("value")
            if value is None or value.type in _TEXT:
                continue
            v = f.verdict(value) or _key_verdict(f.src(key))
            if v:
                out.append(
                    Template([Piece(f.src(value), start=f.char(value.start_byte), verdict=v)], "replace")
                )
        elif n.type == "augmented_assignment_expression" and f.src(n.child_by_field_name("operator")) == "+=":
            left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
            if left is None or right is None or right.type in _TEXT:
                continue
            target = f.src(left)
            if target in declared_text or prompt_named(target):
                v = f.verdict(right)
                if v:
                    out.append(
                        Template([Piece(f.src(right), start=f.char(right.start_byte), verdict=v)], target)
                    )
    return out
