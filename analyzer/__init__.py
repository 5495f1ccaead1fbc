"""prefixgate's offline core: everything that is a function of request bodies and usage numbers.

Pure: no network, no server, no torch. Both the live proxy (``proxy/``) and the offline
tools (``prefixgate lint``/``analyze``/``kv``) import from here.
"""
