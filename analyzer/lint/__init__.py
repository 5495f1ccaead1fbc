"""``prefixgate lint``: flag what breaks prompt caching in prompts, request bodies and logs.

Layout (ruff-style): :mod:`.rules` holds one module per rule (code, kebab-case name,
message template, docs), the nine volatile-value rules PG001–PG009 as entries of one class
in :mod:`.rules.volatile_values`; :mod:`.documents` turns files into text units and parsed requests;
:mod:`.engine` runs the selected rules; :mod:`.output` and :mod:`.sarif` print findings;
:mod:`.baseline` and :mod:`.fix` suppress and repair; :mod:`.cli` is the command.

This package never sends a request anywhere and never rewrites a file without ``--fix``.
"""
