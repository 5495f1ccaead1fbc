"""analyzer.detection.gitstate: slots under git labels and status lines under a git-status intro."""

from __future__ import annotations

from analyzer.detect import find_volatile
from analyzer.detection.gitstate import labelled_slot, status_lines


def test_a_commit_or_the_git_identity_under_a_git_label():
    text = (
        "- Git branch: {{branch}}\n- Git commit: {{commit}}\n- Git user: {{user}}\n- Git email: {{email}}\n"
    )
    assert [v.value for v in find_volatile(text)] == ["{{branch}}", "{{commit}}", "{{user}}", "{{email}}"]
    assert labelled_slot("commit", "- Git commit: ")
    assert labelled_slot("email", "Git email: ")


def test_a_commit_slot_without_a_git_label_is_not_one():
    assert labelled_slot("commit", "Write a message for this commit: ") is None
    assert labelled_slot("topic", "Git commit: ") is None
    assert find_volatile("Write a commit message for: {commit}\n") == []


def test_status_lines_after_a_git_status_intro_are_one_block():
    text = "This is the git status at the start of the conversation.\nStatus:\n(clean)\n\nRecent commits:\n${EXPR_3}\n"
    out: list = []
    status_lines(text, text.lower(), out)
    assert [text[c.start : c.end] for c in out] == ["Status:\n(clean)", "Recent commits:\n${EXPR_3}"]
    assert [v.value for v in find_volatile(text)] == ["Status:\n(clean)", "Recent commits:\n${EXPR_3}"]


def test_status_headers_without_a_git_intro_or_over_prose_are_not_one():
    out: list = []
    plain = "Report progress.\nStatus:\n(clean)\n"
    status_lines(plain, plain.lower(), out)
    prose = (
        "Run git status first.\nStatus:\nDescribe in a few sentences what the task has done so far today.\n"
    )
    status_lines(prose, prose.lower(), out)
    assert out == []
