"""PHP and Ruby expressions: their calls, arguments, and why one is volatile.

:class:`ScriptFile` is a :class:`.codeexpr.CodeFile` for PHP's and Ruby's trees: a callee as one
dotted name (``$user->name`` → ``user.name``, ``Carbon::now`` → ``Carbon.now``, ``@user`` →
``user``), judged by :func:`analyzer.detection.names.judge` with the declarations followed
(``$now = date('c')``), a key naming what it looks up (``$ctx['user_id']``, ``params[:user_id]``),
and the clocks the judge does not know by name: PHP ``date('Y-m-d')`` / ``time()`` / ``uniqid()``,
Ruby ``Time.current`` / ``Time.new``. A chain rooted at a class or constant names nothing.

It does NOT find literals or decide what is a prompt (:mod:`.scripts`).
"""

from __future__ import annotations

import re
from functools import cached_property

from analyzer.detection.names import HIGH, Verdict, config_container, judge
from analyzer.lint.sources.codeexpr import CodeFile
from analyzer.lint.sources.scriptstrings import heredoc_bodies, interpolations

_SIGILS = re.compile(r"(?<![\w$])[$@]+(?=[A-Za-z_{])")
_SIMPLE = re.compile(r"[A-Za-z_]\w*[?!]?(?:\.[A-Za-z_]\w*[?!]?)*")
#: PHP's clock calls by their arguments: ``date(fmt)`` is now, ``date(fmt, $ts)`` the moment given
_AT = {"date": 1, "gmdate": 1, "idate": 1, "strftime": 1, "gmstrftime": 1, "date_create": 0}
_AT |= {"date_create_immutable": 0, "getdate": 0, "localtime": 0}
#: … and those that read the clock or draw a random value whatever their arguments
_FRESH = frozenset("time microtime hrtime uniqid random_int random_bytes mt_rand rand lcg_value".split())
_FRESH |= {"wp_generate_uuid4", "Time.current", "Date.current", "DateTime.current", "Time.zone.now"}
_FRESH |= {"Time.zone.today", "Process.clock_gettime", "SecureRandom.uuid", "SecureRandom.hex"}
_CLASSES = ("name", "qualified_name", "constant", "scope_resolution", "relative_scope")
_OWNED = ("member_call_expression", "nullsafe_member_call_expression", "scoped_call_expression", "call")
_INDEX = ("subscript_expression", "element_reference")


class ScriptFile(CodeFile):
    @cached_property
    def heredocs(self) -> dict[int, object]:
        return heredoc_bodies(self) if self.g.name == "ruby" else {}

    def src_bytes(self, a: int, b: int) -> str:
        return self.data[a:b].decode("utf-8", "replace")

    def dotted(self, node) -> str:
        """``$this->user->name`` → ``this.user.name``; ``Carbon::now`` → ``Carbon.now``."""
        s = "".join(self.src(node).split())
        for op in ("?->", "->", "::", "&."):
            s = s.replace(op, ".")
        return _SIGILS.sub("", s).lstrip("\\").replace("\\", ".")

    def call_parts(self, call) -> tuple[str, object, object]:
        if call.type == "object_creation_expression":
            t = next((c for c in call.named_children if c.type in _CLASSES), None)
            return ("new " + self.dotted(t) if t is not None else "new"), None, None
        if call.type in _OWNED:
            owner = (
                call.child_by_field_name("object")
                or call.child_by_field_name("scope")
                or call.child_by_field_name("receiver")
            )
            name = call.child_by_field_name("name") or call.child_by_field_name("method")
            if name is None:
                return "", owner, None
            return (self.dotted(owner) + "." if owner is not None else "") + self.dotted(name), owner, name
        fn = call.child_by_field_name("function")
        return (self.dotted(fn), None, fn) if fn is not None else ("", None, None)

    def qualifier(self, node) -> bool:
        """A chain's root that is a class or constant: ``Carbon``, ``Time``, ``Foo::Bar``."""
        while node is not None and (node.type in self.g.members or node.type in _OWNED):
            node = self.call_parts(node)[1] if node.type in _OWNED else self.member_parts(node)[0]
        return node is not None and node.type in _CLASSES

    def _fresh(self, dotted: str, args: list) -> tuple[Verdict | None, list]:
        """(the verdict of a clock call the judge does not know, the arguments still to judge)."""
        at = _AT.get(dotted) if self.g.name == "php" else None
        if at is not None:
            if len(args) <= at:
                return Verdict(f"calls `{dotted}()`: the clock", HIGH), []
            return None, args[at:]  # date('Y-m-d', $post->created): the moment given
        if dotted in _FRESH or (dotted == "Time.new" and not args):
            return Verdict(f"calls `{dotted}`", HIGH), []
        return None, args

    def _gather(self, n, names: list[str], calls: list, fresh: list) -> None:
        g, t = self.g, n.type
        if t in g.strings:
            for _, _, expr in interpolations(self, n):
                self._gather(expr, names, calls, fresh)
            return
        if t in g.calls:
            dotted, owner, member = self.call_parts(n)
            args = self.args(n)
            v, args = self._fresh(dotted, args)
            if v is not None:
                fresh.append(v)
                return
            bare = t == "call" and n.child_by_field_name("arguments") is None  # Ruby: user.name
            calls.append((dotted, len(args)))
            qualified = owner is not None and self.qualifier(owner)
            if bare and owner is not None and not qualified and _SIMPLE.fullmatch(dotted):
                names.append(dotted)
                return
            if owner is not None and not (qualified and owner.type in _CLASSES):
                self._gather(owner, names, calls, fresh)
            if member is not None and not qualified and dotted not in _AT:
                names.append(self.dotted(member))
            for a in args:
                self._gather(a, names, calls, fresh)
            return
        if t in g.members:
            owner, member = self.member_parts(n)
            dotted = self.dotted(n)
            if owner is not None and owner.type not in _CLASSES and _SIMPLE.fullmatch(dotted):
                names.append(dotted)
            elif owner is not None and owner.type not in _CLASSES:
                self._gather(owner, names, calls, fresh)
            return
        if t in g.idents or t == "dynamic_variable_name":
            if t != "constant":
                names.append(self.dotted(n).strip("{}"))
            return
        if t in _INDEX:
            owner = n.named_children[0] if n.named_children else None
            keys = [c for c in n.named_children[1:] if c.type in g.strings or c.type == "simple_symbol"]
            if keys and not (owner is not None and config_container(self.dotted(owner))):
                names.append(self.src(keys[0]).strip("\"':"))  # $ctx['user_id']: named by its key
        if t == "pair" and n.child_by_field_name("value") is not None:
            return self._gather(n.child_by_field_name("value"), names, calls, fresh)
        for c in n.named_children:
            self._gather(c, names, calls, fresh)

    def verdict(self, node, calls_only: bool = False) -> Verdict | None:
        if calls_only and node.type == "binary":
            return None  # "Today: " + Time.now.to_s: text, judged where it is built
        names: list[str] = []
        calls: list = []
        fresh: list[Verdict] = []
        self._gather(node, names, calls, fresh)
        if fresh:
            return fresh[0]
        v = judge([] if calls_only else names, calls)
        if v or calls_only:
            return v
        return self.held(names)

    def held(self, names: list[str]) -> Verdict | None:
        for name in names:
            for key in (name, "$" + name, "@" + name):
                if key in self.declared:
                    v = self.declared[key]
                    return Verdict(f"`{name}` holds a value that {v.reason}", v.severity)
        return None
