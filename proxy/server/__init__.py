"""The proxy as a server process: ``prefixgate serve`` and what it adds to uvicorn.

:mod:`.serve` (flags → config), :mod:`.launch` (config → uvicorn), :mod:`.head_limit` (431 for
oversized request heads), :mod:`.shutdown` (bounded graceful shutdown, every cut request
recorded; the app's close within a budget, :mod:`.closing`; the process ended at a deadline,
:mod:`.watchdog`; where a stop was stuck, :mod:`.stacks`), :mod:`.aborts` (one log line, no
traceback, for responses that cannot finish). Request handling itself lives in
:mod:`proxy.handler` and :mod:`proxy.relay`.
"""
