"""Serving many requests on one model, in nano-vllm's split: ``sequence`` (one request), ``allocator``
(blocks for sequences, prefix sharing), ``scheduler`` with ``pacing`` (who runs each step, chunked prefill,
preemption), ``step_batch`` (one step's rows for the network), ``model_runner`` (forward and sample),
``loop`` (the engine thread) and ``engine`` (model + pool + loop). It imports nothing of ``server``.
"""
