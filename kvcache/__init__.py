"""kvcache: a small local PyTorch inference engine for Llama-family checkpoints with a real KV cache.

Modules, one concern each: ``config`` (config.json → ModelConfig), ``loader`` (safetensors → model),
``tokenizer`` (tokenizer.json + chat template), ``rope``/``layers``/``model`` (the network), ``caches``
(contiguous, sliding-window, int8, paged prefix-shared), ``sampling``/``generate`` (the decode loop),
``engine`` (the server-side request runner), ``server``/``cli`` (OpenAI-compatible HTTP), ``demo``
(an offline random demo checkpoint) and ``bench`` (``prefixgate bench engine``).

This package is the only one in prefixgate that imports torch; ``proxy`` and ``analyzer`` never import it.
Of theirs it imports one leaf module, ``analyzer.wire`` (the OpenAI error and SSE shapes the server writes).
It does not batch requests, and it does not download anything.
"""
