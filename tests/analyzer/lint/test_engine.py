"""analyzer.lint.engine: a detector fault on one file is an input error of that file, never a crash."""

from __future__ import annotations

from analyzer.lint import doc as doc_module
from analyzer.lint.engine import run
from analyzer.lint.inputs import load


def test_a_detector_fault_on_a_text_is_that_files_input_error(tmp_path, monkeypatch):
    bad, good = tmp_path / "bad.md", tmp_path / "good.md"
    bad.write_text("Today is {date}.\n", encoding="utf-8")
    good.write_text("Current time: 12:30:05\n", encoding="utf-8")

    real = doc_module.find_volatile

    def flaky(text, **kw):
        if "{date}" in text:
            raise IndexError("list index out of range")
        return real(text, **kw)

    monkeypatch.setattr(doc_module, "find_volatile", flaky)
    loaded = load([str(bad), str(good)])
    findings = run(loaded, {"PG001", "PG002", "PG003", "PG004"})
    assert {f.file for f in findings} == {str(good)}  # the other file is still linted
    assert [e.file for e in loaded.errors] == [str(bad)]
    assert "could not analyse this text (IndexError" in loaded.errors[0].message
