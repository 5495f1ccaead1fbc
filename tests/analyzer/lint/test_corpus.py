"""`prefixgate lint` on the labelled corpus: precision and recall pinned above issue 12's targets
(precision ≥ 0.95, recall ≥ 0.90), and the corpus itself kept well-formed."""

from __future__ import annotations

from tests.support.lint_corpus import CODES, CORPUS, corpus, score, strip_marks

PRECISION, RECALL = 0.95, 0.90
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
    assert CODES == {f"PG00{i}" for i in range(1, 9)}
