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


def _values(text: str) -> list[str]:
    return [text[v.start : v.end] for v in find_volatile(text)]


def test_the_checked_out_branch_after_a_label_that_says_so():
    for text, branch in [
        ("Current branch: main", "main"),
        ("Current branch: feature/payments-v2", "feature/payments-v2"),
        ("Git branch: develop", "develop"),
        ("You are on branch release-1.4.", "release-1.4"),
        ("The current branch is main.", "main"),
        ("On branch main\nnothing to commit, working tree clean", "main"),
    ]:
        assert _values(text) == [branch], text


def test_a_default_branch_or_an_instruction_about_branches_is_not_one():
    for text in [
        "The default branch is main.",
        "Stay on the working branch unless told.",
        "Work on the current branch and push.",
        "Create a new branch for each feature.",
        "Conversation-start snapshot of git branches, status output, and recent commits.",
        "Example: Current branch: main",
    ]:
        assert _values(text) == [], text


def test_git_commit_and_identity_lines_render_their_values():
    for text, value in [
        ("- Git commit: 48213abc", "48213abc"),
        ("- Git user: ana", "ana"),
        ("- Git email: ana@example.com", "ana@example.com"),
        ("**Git user**: Ana Lopez", "Ana Lopez"),
    ]:
        assert _values(text) == [value], text
    for text in ["Use git commit: always sign.", "- Git commit: abc", "Run git status to see changes."]:
        assert _values(text) == [], text


def test_intro_words_are_those_of_the_intro_pattern():
    from analyzer.detection.gitstate import _intro_words

    words = ("git status", "status of the", "git snapshot", "repository status", "git info", "git context")
    words += ("git state",)
    for low in (
        "status",
        "# git information\nstatus:",
        "git context status",
        "a git stat status",
        "git status",
        "the status of the repo",
        "status: ok",
        "a git snapshot",
        "repository status",
        "status git ",
    ):
        assert _intro_words(low) == any(w in low for w in words), low


def test_status_lines_under_a_git_information_heading():
    text = "# Git Information\nCurrent branch: main\n\nStatus:\nM src/app.py\n?? notes.txt\n\nBe brief.\n"
    assert "Status:\nM src/app.py\n?? notes.txt" in [v.value for v in find_volatile(text)]
    prose = "# Git information\nStatus:\nWe explain how to read the status of a file in the guide below.\n"
    assert [v for v in find_volatile(prose) if v.kind == "state"] == []


def test_a_recent_commits_header_over_hash_lines_is_the_log_now():
    from analyzer.detect import find_volatile

    log = "Recent commits:\na1b2c3d Fix the cart total\ne4f5a6b Add tests\n\nAnswer briefly."
    assert [v.value for v in find_volatile(log)] == [
        "Recent commits:\na1b2c3d Fix the cart total\ne4f5a6b Add tests"
    ]
    assert find_volatile("Recent commits:\nWe merged the cart fix.\n") == []
    assert find_volatile("Write clear recent commits: use the imperative.") == []
