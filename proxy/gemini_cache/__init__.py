"""Gemini explicit caching, automated (``prefixgate serve --gemini-auto-cache``).

``hook`` (:class:`AutoCacheHook`: the one object the handler and the relay call, built by
``auto_cache_for``), ``plan`` (where a body may be cut, and the create / rewritten bodies),
``tracker`` (when to create, use, refresh or forget an entry; pure, over a clock), ``manager``
(the hook's state: each request's decision), ``background`` (the ``cachedContents`` calls and
their records), ``calls`` (where they go, the storage charges) and ``resend`` (which errors
refuse a cache). Nothing here runs unless the flag (or an upstream's ``auto_cache``) turns it on.
"""

from proxy.gemini_cache.hook import AutoCacheHook, auto_cache_for
from proxy.gemini_cache.manager import GeminiAutoCache

__all__ = ["AutoCacheHook", "GeminiAutoCache", "auto_cache_for"]
