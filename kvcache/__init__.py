"""kvcache: a small local PyTorch inference engine for Llama-family checkpoints with a real KV cache.

Modules, one concern each: ``config`` (config.json → ModelConfig), ``loader`` (safetensors → model),
``tokenizer`` (tokenizer.json + chat template), ``rope``/``attention``/``layers``/``model`` (the network),
``caches`` (contiguous, sliding-window, int8, paged prefix-shared; the paged pool in fp or int8),
``sampling``/``generate`` (one sequence's decode loop), and serving many users on one model in nano-vllm's
split: ``sequence`` (one request), ``allocator`` (blocks for sequences, prefix sharing), ``scheduler`` and
``pacing`` (who runs each step; chunked prefill; preemption), ``batch`` (one step's rows over the pool),
``runner`` (forward and sample), ``loop`` (the engine thread), ``engine`` (model + pool + loop);
``server``/``completion``/``protocol``/``responses``/``metrics``/``cli`` (OpenAI-compatible HTTP), ``demo``
(an offline random demo checkpoint) and ``bench`` (``prefixgate bench engine`` and ``bench server``).

This package is the only one in prefixgate that imports torch; ``proxy`` and ``analyzer`` never import it.
Of theirs it imports one leaf module, ``analyzer.wire`` (the OpenAI error and SSE shapes the server writes).
It does not download anything.
"""
