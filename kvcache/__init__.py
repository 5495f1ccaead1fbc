"""kvcache: a small local PyTorch inference engine for Llama-family checkpoints with a real KV cache.

Top level: ``config`` (config.json → ModelConfig), ``params`` (generation parameters and timings),
``errors``, ``generate`` (one sequence's decode loop) and ``demo`` (an offline random checkpoint).
Packages, imports running one way (``server`` → ``engine`` → ``models`` → ``layers``): ``layers`` (the
network's parts), ``models`` (the decoder stack), ``caches`` (KV caches and the paged pool), ``engine``
(continuous batching), ``utils`` (loader, tokenizer, dtypes, huge pages), ``server`` (OpenAI-compatible
HTTP, ``prefixgate local``) and ``bench``. The only package in prefixgate that imports torch; of
``analyzer`` it imports the leaves ``analyzer.wire``, ``analyzer.kv`` and ``analyzer.sizes``. It runs on
the CPU or a CUDA GPU and downloads nothing. Design notes: docs/engine.md.
"""
