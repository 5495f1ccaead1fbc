"""Tokenizer files: chat templates from either place transformers writes them, streaming decode."""

from __future__ import annotations

import json
import shutil

import pytest

pytest.importorskip("torch")  # the local extra (tokenizers comes with it)
pytest.importorskip("tokenizers")

from kvcache.errors import EngineError, ModelFilesError  # noqa: E402
from kvcache.utils.tokenizer import ChatTokenizer, StreamDecoder  # noqa: E402
from tests.support.kvcache_checkpoints import prompt_ids, tokenizer_files  # noqa: E402

pytestmark = pytest.mark.local
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]


@pytest.fixture
def folder(tmp_path):
    target = tmp_path / "tok"
    shutil.copytree(tokenizer_files(), target)
    return target


def test_template_from_tokenizer_config_renders_and_encodes(folder):
    tok = ChatTokenizer.from_folder(folder)
    text = tok.render_chat(MESSAGES)
    assert (
        text
        == "<s><|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    )
    ids = tok.encode_chat(MESSAGES)
    assert ids[0] == tok.token_id("<s>") and tok.token_id("<|im_end|>") in ids
    assert tok.decode(ids) == "system\nBe brief.\nuser\nHi\nassistant\n"  # special tokens skipped


def test_chat_template_jinja_file_wins_and_errors_are_clear(folder):
    (folder / "chat_template.jinja").write_text(
        "{% for m in messages %}{% if m['role'] == 'tool' %}{{ raise_exception('no tools') }}{% endif %}"
        "[{{ m['role'] }}] {{ m['content'] }}\n{% endfor %}"
    )
    tok = ChatTokenizer.from_folder(folder)
    assert tok.render_chat(MESSAGES) == "[system] Be brief.\n[user] Hi\n"
    with pytest.raises(EngineError, match="chat template rejected these messages: no tools"):
        tok.render_chat([{"role": "tool", "content": "x"}])


def test_template_environment_matches_transformers(folder):
    (folder / "chat_template.jinja").write_text(
        "{% for m in messages %}{% if loop.index > 1 %}{% break %}{% endif %}"
        "{{ {'role': m['role'], 'text': m['content']} | tojson }}{% endfor %}"
    )
    tok = ChatTokenizer.from_folder(folder)
    # loop controls work; tojson keeps non-ASCII and <, >, & as they are (jinja2's own would escape them)
    assert tok.render_chat([{"role": "user", "content": "café <b> & 'x'"}, MESSAGES[1]]) == (
        '{"role": "user", "text": "café <b> & \'x\'"}'
    )


def test_broken_templates_are_clear_errors_not_tracebacks(folder):
    (folder / "chat_template.jinja").write_text("{% for m in messages %}{{ m['content'] }")
    with pytest.raises(ModelFilesError, match="chat_template.jinja: the chat template does not compile"):
        ChatTokenizer.from_folder(folder)
    (folder / "chat_template.jinja").write_text("{{ messages[0]['content'] + 1 }}")
    with pytest.raises(EngineError, match="chat template failed on these messages: TypeError"):
        ChatTokenizer.from_folder(folder).render_chat(MESSAGES)


def test_without_a_template_a_plain_layout_is_used(folder):
    settings = json.loads((folder / "tokenizer_config.json").read_text())
    del settings["chat_template"]
    (folder / "tokenizer_config.json").write_text(json.dumps(settings))
    assert (
        ChatTokenizer.from_folder(folder).render_chat(MESSAGES) == "system: Be brief.\nuser: Hi\nassistant:"
    )


def test_missing_or_broken_tokenizer_is_named(folder):
    (folder / "tokenizer.json").write_text("{broken")
    with pytest.raises(ModelFilesError, match="cannot read tokenizer"):
        ChatTokenizer.from_folder(folder)
    (folder / "tokenizer.json").unlink()
    with pytest.raises(ModelFilesError, match="missing tokenizer.json"):
        ChatTokenizer.from_folder(folder)


def test_stream_decoder_never_splits_a_character(folder):
    tok = ChatTokenizer.from_folder(folder)
    text = "naïve café — 数据 ✓"
    decoder = StreamDecoder(tok)
    pieces = [decoder.push(i) for i in tok.encode(text, add_special_tokens=False)]
    assert "".join(pieces) == text
    assert all("\ufffd" not in p for p in pieces)


def test_stream_decoder_reads_short_windows_and_agrees_with_a_full_decode(folder):
    tok = ChatTokenizer.from_folder(folder)
    ids = prompt_ids(600, seed=3) + tok.encode(" (数据) end", add_special_tokens=False)
    windows = []
    decode = tok.decode
    tok.decode = lambda part: windows.append(len(part)) or decode(part)
    decoder = StreamDecoder(tok)
    text = "".join(decoder.push(i) for i in ids)
    assert text == decode(ids)  # random ids: invalid byte runs included
    assert max(windows) < 40  # never the whole output again
