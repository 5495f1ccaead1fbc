"""Text ↔ token ids from a checkpoint folder: ``tokenizer.json`` via ``tokenizers``, chat template via jinja2.

The chat template comes from ``chat_template.jinja`` (transformers 5.x) or ``tokenizer_config.json``'s
``chat_template``; it is rendered in a sandbox with ``messages``, ``bos_token``, ``eos_token`` and
``add_generation_prompt``, like transformers does. Without a template a plain "role: content" layout is
used. ``StreamDecoder`` turns a stream of ids into text pieces without splitting UTF-8 characters.
It does not train tokenizers (see ``demo``).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from jinja2 import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment
from tokenizers import Tokenizer

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


class ChatTokenizer:
    def __init__(self, tokenizer: Tokenizer, settings: dict[str, Any], template: str | None):
        self.tokenizer = tokenizer
        self.bos_token = _token_text(settings.get("bos_token"))
        self.eos_token = _token_text(settings.get("eos_token"))
        self.template_source = template or FALLBACK_TEMPLATE
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        env.globals["raise_exception"] = _raise
        env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
        self.template = env.from_string(self.template_source)

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
        settings: dict[str, Any] = {}
        config_path = folder / "tokenizer_config.json"
        if config_path.is_file():
            try:
                settings = json.loads(config_path.read_text(encoding="utf-8"))
            except ValueError as exc:
                raise ModelFilesError(f"{config_path}: invalid JSON ({exc})") from None
        template_path = folder / "chat_template.jinja"
        template = (
            template_path.read_text(encoding="utf-8") if template_path.is_file() else settings.get("chat_template")
        )
        if isinstance(template, list):  # named templates: take "default"
            template = next((t.get("template") for t in template if t.get("name") == "default"), None)
        return cls(tokenizer, settings, template)

    def token_id(self, text: str | None) -> int | None:
        return self.tokenizer.token_to_id(text) if text else None

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.get_vocab_size()

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

    def encode_chat(self, messages: list[dict[str, Any]]) -> list[int]:
        # The template writes special tokens (e.g. BOS) itself, so none are added on top.
        return self.encode(self.render_chat(messages), add_special_tokens=False)


class StreamDecoder:
    """Feed token ids one by one; get back only the newly completed text."""

    def __init__(self, tokenizer: ChatTokenizer):
        self.tokenizer = tokenizer
        self.ids: list[int] = []
        self.emitted = 0

    def push(self, token_id: int) -> str:
        self.ids.append(token_id)
        text = self.tokenizer.decode(self.ids)
        if text.endswith("\ufffd"):  # an incomplete UTF-8 sequence: wait for the next token
            return ""
        piece, self.emitted = text[self.emitted :], len(text)
        return piece

    @property
    def text(self) -> str:
        return self.tokenizer.decode(self.ids)
