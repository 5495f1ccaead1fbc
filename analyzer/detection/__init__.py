"""The pieces of :mod:`analyzer.detect` (volatile values in prompt text), one concern each.

- :mod:`.shapes` — what a volatile value looks like: the regexes and the one-pass scan
  that finds candidate spans (anchored at digits, template braces and a few key words).
- :mod:`.context` — what the words around a value say: its label, "current"/"today"
  wording, example, cut-off, release and historical wording, code spans and links.
- :mod:`.names` — whether a template slot or a code expression is volatile by what it
  names (``user_session``, ``turn_count``) or calls (``datetime.now()``, ``new Date()``).
- :mod:`.judge` — keeps or drops each candidate and says why.

Nothing here knows about requests, files or lint rules; :func:`analyzer.detect.find_volatile`
is the public entry point.
"""
