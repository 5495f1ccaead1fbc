"""Gemini explicit caching, automated (``prefixgate serve --gemini-auto-cache``).

``plan`` (where a body may be cut, and the create / rewritten bodies), ``tracker`` (when to
create, use, refresh or forget an entry; pure, over a clock), ``manager`` (the request-path
hook, the background ``cachedContents`` calls and the storage charges). Nothing here runs
unless the flag (or an upstream's ``auto_cache``) turns it on.
"""

from proxy.gemini_cache.manager import GeminiAutoCache

__all__ = ["GeminiAutoCache"]
