"""The network's parts as plain tensor code: ``attention`` (kernels), ``norm``, ``linear``, ``rotary``,
``decoder`` (one decoder layer), ``sampler`` (logits → token) and ``context`` (what an engine step hands
the network). It imports nothing of ``engine`` or ``server``.
"""
