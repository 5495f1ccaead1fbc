"""One document as the rules see it: a prompt file, a source file or one request, its text
units and the volatile values found in each (detected once, shared by every rule).

Where a string sits in a request body decides how it is read: JSON-schema ``examples``,
``example``, ``enum``, ``default`` and ``const`` values are examples, never findings; a
``description`` is read with :func:`analyzer.detect.find_volatile`'s ``"description"``
context (a clock time or date there needs a "now" label). A source file's units are its
prompt-like literals and templates (:mod:`analyzer.lint.sources`); in a Jinja, Handlebars or
Go template file a single-brace ``{name}`` is literal text, never a slot; in a YAML or TOML file a
whole-line comment is no prompt text (:mod:`.yamltext`), and in a JSON config read as text only its
prompt strings are (an n8n workflow's node ids and parameters are not). It runs no rule.
"""

from __future__ import annotations

import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.detect import Volatile, find_volatile
from analyzer.lint import cassettes, jsonpos, yamltext
from analyzer.lint.documents import Request, SourceFile, TextUnit, text_unit
from analyzer.lint.inputs import TEMPLATE_KEYS
from analyzer.lint.model import InputError
from analyzer.lint.sources import (
    COMPILED_SUFFIXES,
    JS_SUFFIXES,
    SCRIPT_SUFFIXES,
    compiled,
    javascript,
    python,
    scripts,
)
from analyzer.lint.sources.pieces import volatile_values

_SCHEMA_EXAMPLE = re.compile(r"\.(?:examples?|enum|default|const)(?:\[\d+\])*$")
_DESCRIPTION = re.compile(r"\.description$")


def field_context(path: str | None) -> str | None:
    """``"prompt"``, ``"description"``, or None for a schema example (never a finding)."""
    if path and _SCHEMA_EXAMPLE.search(path):
        return None
    return "description" if path and _DESCRIPTION.search(path) else "prompt"


#: template files whose slots are ``{{ … }}``: a single-brace ``{month}`` there is literal text the model reads
BRACE_TEMPLATES = frozenset(
    ".j2 .jinja .jinja2 .njk .hbs .handlebars .mustache .liquid .tmpl .gotmpl".split()
)


def _single_brace(v: Volatile) -> bool:
    return v.kind == "placeholder" and v.value.startswith("{") and not v.value.startswith(("{{", "{%", "{#"))


def _vols(unit: TextUnit) -> list[Volatile]:
    context = field_context(unit.field)
    return [] if context is None else find_volatile(unit.text, context=context)


def _prompt_values(text: str) -> list[tuple[int, int]]:
    """The spans of a JSON config's prompt strings (its template keys' values: ``system_prompt``, an n8n
    node's ``systemMessage``), sorted; [] when there are none or the text does not parse."""
    try:
        spans = jsonpos.locate(text)
    except (ValueError, IndexError, AttributeError, RecursionError):
        return []
    keys = tuple(f".{k}" for k in TEMPLATE_KEYS)
    return sorted(span for path, span in spans.items() if (path.endswith(keys) or path in TEMPLATE_KEYS))


@dataclass
class Doc:
    file: SourceFile
    request: Request | None
    units: list[TextUnit]
    vols: list[list[Volatile]] = field(default_factory=list)

    @classmethod
    def for_text(cls, src: SourceFile) -> Doc:
        suffix = Path(src.path).suffix.lower()
        bodies = cassettes.request_bodies(src.text) if suffix in (".yaml", ".yml") else None
        if bodies is not None:  # a VCR cassette: the requests' bodies, not the responses or headers
            units = [
                TextUnit(src.text[a:b], None, True, lambda i, a=a: src.line_col(a + i)) for a, b in bodies
            ]
            return cls(src, None, units, [find_volatile(u.text) for u in units])
        unit = text_unit(src)
        vols = find_volatile(unit.text)
        if suffix in BRACE_TEMPLATES:
            vols = [v for v in vols if not _single_brace(v)]
        elif suffix in (".yaml", ".yml") and (comments := yamltext.comment_lines(unit.text)):
            vols = [v for v in vols if not yamltext.in_spans(comments, v.start)]  # dropped by YAML's parser
        elif suffix == ".toml" and (comments := yamltext.toml_comment_lines(unit.text)):
            vols = [v for v in vols if not yamltext.in_spans(comments, v.start)]  # … and by TOML's
        elif suffix == ".json" and (prompts := _prompt_values(unit.text)):
            vols = [
                v for v in vols if yamltext.in_spans(prompts, v.start)
            ]  # a config's other values: no prompt
        return cls(src, None, [unit], [vols])

    @classmethod
    def for_source(cls, src: SourceFile) -> Doc:
        """A Python, JS/TS, Go, Rust, Java, C#, Kotlin, Swift, PHP or Ruby file: one unit per prompt-like
        literal (raises InputError when a Python file does not parse; any other that does not is read as
        text)."""
        suffix = Path(src.path).suffix.lower()
        try:
            if suffix in COMPILED_SUFFIXES or suffix in SCRIPT_SUFFIXES:
                reader = compiled if suffix in COMPILED_SUFFIXES else scripts
                found = reader.templates(src.text, suffix)
                if found is None:
                    return cls.for_text(src)
            elif suffix in JS_SUFFIXES:
                found = javascript.templates(src.text, suffix)
            else:
                found = python.templates(src.text)
        except SyntaxError as exc:
            raise InputError(src.path, f"not valid Python: {exc.msg}", exc.lineno, exc.offset) from None
        except (ValueError, RecursionError, tokenize.TokenError) as exc:  # null bytes, absurd nesting
            raise InputError(src.path, f"not valid Python: {exc}") from None
        except (
            Exception
        ) as exc:  # a source shape the scanner did not foresee: an input error (exit 2), never a crash
            raise InputError(
                src.path, f"could not read prompt literals ({type(exc).__name__}: {exc})"
            ) from None
        units = [
            TextUnit(
                t.text,
                None,
                True,
                lambda i, t=t: src.line_col(t.file_offset(i)),
                end_position=lambda i, t=t: src.line_col(t.file_end(i)),
            )
            for t in found
        ]
        return cls(src, None, units, [volatile_values(t) for t in found])

    @classmethod
    def for_request(cls, req: Request) -> Doc:
        units = req.units()
        return cls(req.file, req, units, [_vols(u) for u in units])

    def static_after(self, unit_index: int, offset: int) -> int:
        """Bytes of cacheable content after ``offset`` of a unit (what a volatile value there un-caches)."""
        unit = self.units[unit_index]
        rest = len(unit.text[offset:].encode("utf-8"))
        if self.request is None or unit.segment is None:
            return rest
        segs = self.request.segments[unit.segment + 1 : self.request.boundary]
        return rest + sum(len(s.data) for s in segs)

    def prefix_bytes(self) -> int:
        if self.request is None:
            return len(self.file.text.encode("utf-8"))
        return sum(len(s.data) for s in self.request.segments[: self.request.boundary])
