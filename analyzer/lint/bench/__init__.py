"""``prefixgate bench lint``: the volatile-value detector and the whole lint, timed.

- :mod:`.prompts` — a deterministic generator of realistic ~20 KB system prompts.
- :mod:`.legacy_detect` — the detector before the one-pass scan, frozen, for the ratio.
- :mod:`.command` — the click command: JSON and a table.

A benchmark, not a test: nothing here asserts a time.
"""
