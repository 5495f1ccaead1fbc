"""analyzer.lint.sources.scriptexpr: PHP and Ruby expressions judged by what they call and name,
declarations followed; a given moment, a class constant or a config look-up is not volatile."""

from __future__ import annotations

import pytest

from analyzer.lint.sources.scriptexpr import ScriptFile


def verdict(src: str, grammar: str) -> str | None:
    """The reason the value of the file's last assignment is volatile."""
    f = ScriptFile(src, grammar)
    decl = [n for n in f.walk(f.tree.root_node) if n.type in f.g.decls][-1]
    v = f.verdict(decl.child_by_field_name("right"))
    return v.reason if v else None


@pytest.mark.parametrize(
    "src, grammar, want",
    [
        ("<?php $x = date('Y-m-d');", "php", "calls `date()`: the clock"),
        ("<?php $x = date('Y-m-d', $row['published']);", "php", None),  # a given moment
        ("<?php $x = date('Y-m-d', time());", "php", "calls `time`"),
        ("<?php $x = Carbon::now()->format('Y');", "php", "calls `Carbon.now()`"),
        ("<?php $x = \\Carbon\\Carbon::today();", "php", "calls `Carbon.Carbon.today()`"),
        ("<?php $x = new DateTime();", "php", "calls `new DateTime()`"),
        ("<?php $x = uniqid();", "php", "calls `uniqid`"),
        (
            "<?php $x = $this->user->name;",
            "php",
            "named `this.user.name`: a field of the user served, per user",
        ),
        ("<?php $x = $ctx['user_id'];", "php", "named `user_id`: the current user's own value"),
        ("<?php $x = Config::TIMEOUT;", "php", None),
        ("<?php $x = $settings['model'];", "php", None),
        (
            "<?php $stamp = date('c');\n$x = $stamp;",
            "php",
            "`stamp` holds a value that calls `date()`: the clock",
        ),
        ("x = Time.now", "ruby", "calls `Time.now()`"),
        ("x = Time.zone.now.to_date", "ruby", "calls `Time.zone.now`"),
        ("x = DateTime.now.strftime('%F')", "ruby", "calls `DateTime.now()`"),
        ("x = Time.new", "ruby", "calls `Time.new`"),
        ("x = Time.new(2024, 1, 1)", "ruby", None),
        ("x = post.published_at.strftime('%F')", "ruby", None),
        (
            "x = @current_user.email",
            "ruby",
            "named `current_user.email`: a field of the current_user served, per user",
        ),
        ("x = params[:session_id]", "ruby", "named `session_id`: a session id"),
        ("x = ENV['MODEL']", "ruby", None),
        ("@started = Time.now\nx = @started", "ruby", "`started` holds a value that calls `Time.now()`"),
    ],
)
def test_expressions_are_judged(src, grammar, want):
    assert verdict(src, grammar) == want
