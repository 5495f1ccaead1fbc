"""The engine's OpenAI-compatible HTTP side: ``app`` (routes, errors), ``completion`` (one request's tokens
→ text), ``protocol`` and ``responses`` (request and response shapes), ``metrics`` (Prometheus), ``stops``
(stop strings) and ``cli`` (``prefixgate local``). It loads no models itself (``engine`` does).
"""
