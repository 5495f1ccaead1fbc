"""Text ↔ token ids from a checkpoint folder: ``tokenizer.json`` via ``tokenizers``, chat template via jinja2.

The chat template comes from ``chat_template.jinja`` (transformers 5.x) or ``tokenizer_config.json``'s
``chat_template``; it is rendered in a sandbox with ``messages``, ``bos_token``, ``eos_token`` and
``add_generation_prompt``, with the same environment as transformers (``{% break %}``/``{% continue %}``,
a ``tojson`` that keeps non-ASCII text and does not HTML-escape, ``raise_exception``, ``strftime_now``).
A template that does not compile is reported as a ``ModelFilesError`` naming it. Without a template a
plain "role: content" layout is used. ``StreamDecoder`` turns a stream of ids into text pieces without
splitting UTF-8 characters. It does not train tokenizers (see ``demo``).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from jinja2 import TemplateError
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment
from tokenizers import Tokenizer

from kvcache.config import read_json_object
from kvcache.errors import EngineError, ModelFilesError

FALLBACK_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)


def _token_text(value: Any) -> str | None:
    if isinstance(value, dict):
        return value.get("content")
    return value if isinstance(value, str) else None


def _raise(message: str) -> None:
    raise TemplateError(message)


def _tojson(
    value: Any, ensure_ascii: bool = False, indent: int | None = None, separators=None, sort_keys=False
) -> str:
    """transformers' ``tojson``: plain ``json.dumps`` (jinja2's own escapes <, >, & and ' for HTML)."""
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


class ChatTokenizer:
    def __init__(self, tokenizer: Tokenizer, settings: dict[str, Any], template: str | None):
        self.tokenizer = tokenizer
        self.bos_token = _token_text(settings.get("bos_token"))
        self.eos_token = _token_text(settings.get("eos_token"))
        self.template_source = template or FALLBACK_TEMPLATE
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
        env.filters["tojson"] = _tojson
        env.globals["raise_exception"] = _raise
        env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
        try:
            self.template = env.from_string(self.template_source)
        except TemplateError as exc:
            raise ModelFilesError(f"the chat template does not compile: {exc}") from None

    @classmethod
    def from_folder(cls, folder: str | Path) -> ChatTokenizer:
        folder = Path(folder)
        path = folder / "tokenizer.json"
        if not path.is_file():
            raise ModelFilesError(f"{path}: missing tokenizer.json")
        try:
            tokenizer = Tokenizer.from_file(str(path))
        except Exception as exc:  # tokenizers raises plain Exception subclasses
            raise ModelFilesError(f"{path}: cannot read tokenizer ({exc})") from None
        config_path = folder / "tokenizer_config.json"
        settings = read_json_object(config_path) if config_path.is_file() else {}
        template_path = folder / "chat_template.jinja"
        try:
            template = (
                template_path.read_text(encoding="utf-8")
                if template_path.is_file()
                else settings.get("chat_template")
            )
        except (OSError, ValueError) as exc:
            raise ModelFilesError(f"{template_path}: cannot read ({exc})") from None
        if isinstance(template, list):  # named templates: take "default"
            template = next(
                (t.get("template") for t in template if isinstance(t, dict) and t.get("name") == "default"),
                None,
            )
        where = template_path if template_path.is_file() else config_path
        try:
            return cls(tokenizer, settings, template if isinstance(template, str) else None)
        except ModelFilesError as exc:
            raise ModelFilesError(f"{where}: {exc}") from None

    def token_id(self, text: str | None) -> int | None:
        return self.tokenizer.token_to_id(text) if text else None

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=add_special_tokens).ids

    def decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def render_chat(self, messages: list[dict[str, Any]], add_generation_prompt: bool = True) -> str:
        try:
            return self.template.render(
                messages=messages,
                add_generation_prompt=add_generation_prompt,
                bos_token=self.bos_token or "",
                eos_token=self.eos_token or "",
            )
        except TemplateError as exc:
            raise EngineError(f"the chat template rejected these messages: {exc}") from None
        except Exception as exc:  # the template is the checkpoint's code: any failure is about these messages
            raise EngineError(
                f"the chat template failed on these messages: {type(exc).__name__}: {exc}"
            ) from None

    def encode_chat(self, messages: list[dict[str, Any]]) -> list[int]:
        # The template writes special tokens (e.g. BOS) itself, so none are added on top.
        return self.encode(self.render_chat(messages), add_special_tokens=False)


class StreamDecoder:
    """Feed token ids one by one; get back only the newly completed text.

    Each step decodes a short window, not the whole output (which grew quadratic: about 1 ms a token at
    8k tokens): the tokens not yet emitted, after the previously emitted piece's tokens as context (so
    decoders that strip or merge at the start of a text give the same result as a full decode). This is
    vLLM's incremental detokenization."""

    def __init__(self, tokenizer: ChatTokenizer):
        self.tokenizer = tokenizer
        self.ids: list[int] = []
        self.prefix_offset = 0  # where the context window starts
        self.read_offset = 0  # the tokens before this one are emitted

    def push(self, token_id: int) -> str:
        self.ids.append(token_id)
        context = self.tokenizer.decode(self.ids[self.prefix_offset : self.read_offset])
        text = self.tokenizer.decode(self.ids[self.prefix_offset :])
        if len(text) <= len(context) or text.endswith(
            "\ufffd"
        ):  # nothing yet, or an incomplete UTF-8 sequence
            return ""
        self.prefix_offset, self.read_offset = self.read_offset, len(self.ids)
        return text[len(context) :]
