"""`prefixgate lint` on the labelled corpora: the adapted corpus pinned above issue 12's targets
(precision ≥ 0.95, recall ≥ 0.90); the real corpus's held-out test half pinned at what it
measures (issue 22 aims at 0.97 and 0.92), the detector being tuned on the dev half only; both
corpora kept well-formed and the real one split by repository; the share of the test half's rendered
values the aggressive rewrite moves pinned too (:mod:`tests.support.rendered_recall`)."""

from __future__ import annotations

from tests.support import rendered_recall
from tests.support.lint_corpus import (
    CODES,
    CORPUS,
    HALVES,
    corpus,
    half_of,
    real,
    score,
    sources,
    strip_marks,
)

PRECISION, RECALL = 0.95, 0.90
#: the test half as measured (precision 0.753, recall 0.633 on 1,666 spans, issue 22 round 12, after
#: forty-three batches of unseen prompts joined it; batches 31 and 41's customer and voice-agent templates
#: cost precision), less a margin
TEST_PRECISION, TEST_RECALL = 0.73, 0.62
#: the dev half as measured (precision 0.887, recall 0.793 on 1,782 spans, round 12), less a margin
DEV_PRECISION, DEV_RECALL = 0.86, 0.76
#: rendered values of the test half the aggressive rewrite moves (0.485 of 936, round 12; 0.543 of 692 in
#: round 11, 0.578 of 540 in round 10: the half grew by harder prompts each time), less a margin
TEST_RENDERED = 0.47
KINDS = {".txt", ".md", ".j2", ".jinja", ".hbs", ".mustache", ".tmpl", ".json", ".py", ".ts", ".tsx", ".js"}


def test_precision_and_recall_meet_the_targets(tmp_path):
    s = score(tmp_path)
    report = "\n".join(["missed:", *s.missed, "false:", *s.false])
    assert s.labelled >= 90, "the corpus shrank"
    assert s.precision >= PRECISION, report
    assert s.recall >= RECALL, report


def test_every_corpus_file_is_cited_and_labelled_spans_are_well_formed():
    sources = (CORPUS / "SOURCES.md").read_text(encoding="utf-8")
    docs = corpus()
    assert len(docs) >= 40
    for doc in docs:
        assert f"| {doc.name} |" in sources, f"{doc.name} has no row in SOURCES.md"
        assert all(0 <= a < b <= len(doc.text) for a, b in doc.spans)
        assert all(doc.text[a:b].strip() == doc.text[a:b] for a, b in doc.spans), (
            f"{doc.name}: a label with spaces at its ends"
        )
    assert {
        d.name[d.name.rfind(".") :] for d in docs
    } >= KINDS  # prompts, templates, bodies and code in every language


def test_strip_marks_maps_spans_onto_the_clean_text():
    text, spans = strip_marks("a ⟦b⟧ c ⟦dd⟧.")
    assert text == "a b c dd." and [text[a:b] for a, b in spans] == ["b", "dd"]


def test_scoring_counts_a_today_phrase_before_a_label_as_neither(tmp_path):
    from tests.support.lint_corpus import Labelled

    text, spans = strip_marks(
        "You are helpful.\nCurrent time: ⟦14:05:09⟧\nAs of today, 3 agents are online.\n"
    )
    s = score(tmp_path, [Labelled("t.md", text, spans)])
    assert (s.true, s.neutral, s.recall) == (1, 1, 1.0)
    assert CODES == {f"PG00{i}" for i in range(1, 10)}


def test_a_file_lint_cannot_read_counts_with_no_findings(tmp_path):
    from tests.support.lint_corpus import Labelled

    text, spans = strip_marks('{"name": "app", "note": "Today is ⟦2025-04-24⟧"}')
    readable, _ = strip_marks("Current time: ⟦14:05:09⟧\n")
    s = score(tmp_path, [Labelled("workflow.json", text, spans), Labelled("t.md", readable, [(14, 22)])])
    assert s.unreadable == ["workflow.json"] and (s.labelled, len(s.missed), s.true) == (2, 1, 1)


def test_the_test_half_is_pinned_at_what_it_measures(tmp_path):
    docs = real("test")
    s = score(tmp_path, docs)
    # figures only: the held-out half's findings are not for reading while the detector changes,
    # so a failure shows plain numbers (pytest would print the whole Score of an attribute)
    labelled, precision, recall, unreadable = s.labelled, s.precision, s.recall, len(s.unreadable)
    del s
    assert labelled >= 150, "the test half shrank"
    assert unreadable <= 2, f"{unreadable} files lint cannot read"
    assert precision >= TEST_PRECISION, f"precision {precision:.3f}"
    assert recall >= TEST_RECALL, f"recall {recall:.3f}"


def test_the_dev_half_is_pinned_at_what_it_measures(tmp_path):
    s = score(tmp_path, real("dev"))
    report = "\n".join(["missed:", *s.missed, "false:", *s.false])
    assert s.labelled >= 100, "the dev half shrank"
    assert s.precision >= DEV_PRECISION, report
    assert s.recall >= DEV_RECALL, report


def test_the_real_corpus_is_split_by_repository_and_each_folder_is_cited():
    found = sources()
    assert len(found) >= 30 and {half_of(s.repo) for s in found} == set(HALVES)
    for src in found:
        assert src.repo.count("/") == 1 and src.folder.name == src.repo.replace("/", "__"), src.folder
        assert src.half == half_of(src.split_repo), f"{src.repo}: SOURCE.md says {src.half}"
        files = {p.name for p in src.folder.iterdir() if p.is_file() and p.name != "SOURCE.md"}
        assert files and files <= set(src.counts), (
            f"{src.repo}: files without a row {files - set(src.counts)}"
        )
    docs = {d.name: d for d in real()}
    assert len(docs) >= 150
    for src in found:
        for name, n in src.counts.items():
            doc = docs.get(f"{src.folder.name}/{name}")
            assert doc is not None and len(doc.spans) == n, f"{src.folder.name}/{name}: {n} announced"


def test_the_aggressive_rewrite_moves_the_test_halfs_rendered_values():
    total, moved, _ = rendered_recall.measure("test")  # figures only, as above
    assert total >= 200, "the test half's text prompts shrank"
    assert moved / total >= TEST_RENDERED, f"moved {moved} of {total}"


def test_a_fork_goes_to_its_upstreams_half(tmp_path):
    from analyzer.lint.bench.corpus import real as real_of

    other = next(h for h in HALVES if h != half_of("acme/upstream"))
    fork = next(f"fork{i}/upstream" for i in range(100) if half_of(f"fork{i}/upstream") == other)
    owner, name = fork.split("/")
    folder = tmp_path / f"{owner}__{name}"
    folder.mkdir()
    (folder / "SOURCE.md").write_text(
        f"repo: {fork}\nhalf: {half_of('acme/upstream')}\nfork_of: acme/upstream\n\n| file | a | b | c | 1 | d |\n",
        encoding="utf-8",
    )
    (folder / "file").write_text("Today is ⟦{today}⟧.\n", encoding="utf-8")
    assert [d.name for d in real_of(tmp_path, half_of("acme/upstream"))] == [f"{owner}__{name}/file"]
    assert real_of(tmp_path, other) == []


def test_a_rules_failure_still_stops_the_score(tmp_path, monkeypatch):
    import pytest

    from analyzer.lint.bench import corpus as scoring
    from tests.support.lint_corpus import Labelled

    def broken(*args, **kwargs):
        raise ValueError("a rule's bug")

    monkeypatch.setattr(scoring, "run", broken)
    with pytest.raises(ValueError, match="a rule's bug"):
        score(tmp_path, [Labelled("t.md", "Current time: 14:05\n", [(14, 19)])])
