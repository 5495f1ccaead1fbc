"""The pieces of :mod:`analyzer.detect` (volatile values in prompt text), one concern each.

:mod:`.shapes` (the one-pass scan for candidate spans), :mod:`.context` (what the words around
a value say), :mod:`.names` (slots and expressions volatile by name or call) and :mod:`.judge`
(keeps or drops each candidate and says why).

It does NOT know about requests, files or lint rules; :func:`analyzer.detect.find_volatile` is
the public entry point.
"""
