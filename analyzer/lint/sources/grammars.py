"""Go, Rust, Java, C#, Kotlin, Swift (:mod:`.compiled`), PHP, Ruby (:mod:`.scripts`): a :class:`Grammar` each.

A grammar names its tree-sitter wheel, the node types of string literals, calls, member access
and declarations, and says how to get a call's callee, a call's arguments and a member's parts.
Suffixes: ``.go``, ``.rs``, ``.java``, ``.cs``, ``.kt``/``.kts``, ``.swift`` (PHP and Ruby: :mod:`.scripts`).

It does NOT parse anything itself, decode literals (:mod:`.codestrings`) or decide what is a prompt.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class Grammar:
    name: str
    module: str  # the tree-sitter wheel's module
    strings: frozenset[str]
    calls: frozenset[str]
    #: member access: (node type, object field, member field); Kotlin's have no fields (first and last child)
    members: dict[str, tuple[str, str]]
    idents: frozenset[str]
    #: declaration node type → (name field, value field); "" for a child found by type
    decls: dict[str, tuple[str, str]]
    #: where a literal is named: node type → the field naming it
    namers: dict[str, str]
    #: where a literal is no prompt by where it stands
    skips: frozenset[str]
    args: frozenset[str]  # argument list node types
    function_types: frozenset[str]
    returns: frozenset[str]


def _g(name, module, strings, calls, members, idents, decls, namers, skips, args, functions, returns):
    return Grammar(
        name,
        module,
        frozenset(strings.split()),
        frozenset(calls.split()),
        members,
        frozenset(idents.split()),
        decls,
        namers,
        frozenset(skips.split()),
        frozenset(args.split()),
        frozenset(functions.split()),
        frozenset(returns.split()),
    )


_SKIPS = "import_declaration import_spec use_declaration attribute_item inner_attribute_item import_header "
_SKIPS += "throw_statement throw_expression switch_label case_clause expression_case match_pattern match_arm "
_SKIPS += "index_expression element_access_expression indexing_suffix package_clause package_declaration "
_SKIPS += "field_declaration_tag import_list using_directive"

GRAMMARS = {
    "go": _g(
        "go",
        "tree_sitter_go",
        "interpreted_string_literal raw_string_literal",
        "call_expression",
        {"selector_expression": ("operand", "field")},
        "identifier field_identifier",
        {
            "short_var_declaration": ("left", "right"),
            "var_spec": ("name", "value"),
            "const_spec": ("name", "value"),
        },
        {"keyed_element": "key", "assignment_statement": "left"},
        _SKIPS,
        "argument_list",
        "function_declaration method_declaration func_literal",
        "return_statement",
    ),
    "rust": _g(
        "rust",
        "tree_sitter_rust",
        "string_literal raw_string_literal",
        "call_expression",
        {"field_expression": ("value", "field"), "scoped_identifier": ("path", "name")},
        "identifier field_identifier",
        {
            "let_declaration": ("pattern", "value"),
            "const_item": ("name", "value"),
            "static_item": ("name", "value"),
        },
        {"field_initializer": "field", "assignment_expression": "left", "compound_assignment_expr": "left"},
        _SKIPS,
        "arguments",
        "function_item closure_expression",
        "return_expression",
    ),
    "java": _g(
        "java",
        "tree_sitter_java",
        "string_literal",
        "method_invocation object_creation_expression",
        {"field_access": ("object", "field")},
        "identifier",
        {"variable_declarator": ("name", "value")},
        {"element_value_pair": "key", "assignment_expression": "left", "annotation": "name"},
        _SKIPS,
        "argument_list annotation_argument_list",
        "method_declaration constructor_declaration lambda_expression",
        "return_statement",
    ),
    "csharp": _g(
        "csharp",
        "tree_sitter_c_sharp",
        "string_literal verbatim_string_literal raw_string_literal interpolated_string_expression",
        "invocation_expression object_creation_expression",
        {"member_access_expression": ("expression", "name")},
        "identifier",
        {"variable_declarator": ("name", "")},
        {
            "assignment_expression": "left",
            "property_declaration": "name",
            "attribute": "name",
            "argument": "name",
        },
        _SKIPS,
        "argument_list attribute_argument_list",
        "method_declaration local_function_statement constructor_declaration",
        "return_statement arrow_expression_clause",
    ),
    "kotlin": _g(
        "kotlin",
        "tree_sitter_kotlin",
        "string_literal multiline_string_literal",
        "call_expression",
        {"navigation_expression": ("", "")},
        "identifier simple_identifier",
        {"property_declaration": ("", "")},
        {"assignment": "left"},
        _SKIPS,
        "value_arguments",
        "function_declaration lambda_literal",
        "return_expression",
    ),
    "swift": _g(
        "swift",
        "tree_sitter_swift",
        "line_string_literal multi_line_string_literal raw_string_literal",
        "call_expression",
        {"navigation_expression": ("", "")},
        "simple_identifier",
        {"property_declaration": ("", "")},
        {"assignment": "target"},
        _SKIPS,
        "value_arguments",
        "function_declaration lambda_literal",
        "control_transfer_statement",
    ),
    "php": _g(
        "php",
        "tree_sitter_php",
        "encapsed_string string heredoc nowdoc",
        "function_call_expression member_call_expression nullsafe_member_call_expression "
        "scoped_call_expression object_creation_expression",
        {
            "member_access_expression": ("object", "name"),
            "nullsafe_member_access_expression": ("object", "name"),
            "scoped_property_access_expression": ("scope", "name"),
            "class_constant_access_expression": ("", ""),
        },
        "variable_name",
        {"assignment_expression": ("left", "right")},
        {"augmented_assignment_expression": "left", "property_element": "name"},
        "echo_statement print_intrinsic exit_statement throw_expression subscript_expression case_statement "
        "match_condition_list include_expression include_once_expression require_expression "
        "require_once_expression namespace_use_declaration attribute_list",
        "arguments",
        "function_definition method_declaration anonymous_function arrow_function",
        "return_statement",
    ),
    "ruby": _g(
        "ruby",
        "tree_sitter_ruby",
        "string heredoc_beginning chained_string",
        "call",
        {"scope_resolution": ("scope", "name")},
        "identifier instance_variable class_variable global_variable constant",
        {"assignment": ("left", "right")},
        {"operator_assignment": "left"},
        "element_reference pattern",
        "argument_list",
        "method singleton_method lambda",
        "return",
    ),
}
SUFFIXES = {".go": "go", ".rs": "rust", ".java": "java", ".cs": "csharp", ".kt": "kotlin", ".kts": "kotlin"}
SUFFIXES[".swift"] = "swift"


@cache
def parser(name: str):
    """A tree-sitter parser for a grammar (None when its wheel is not installed)."""
    from tree_sitter import Language, Parser

    try:
        grammar = importlib.import_module(GRAMMARS[name].module)
    except ImportError:
        return None
    return Parser(
        Language((getattr(grammar, "language_php", None) or grammar.language)())
    )  # PHP: with its HTML
