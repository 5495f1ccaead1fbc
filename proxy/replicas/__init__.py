"""A pool of replicas behind one upstream: which replica serves a request, and what each did.

:mod:`.routing_key` names the prefix a request is routed by, :mod:`.rendezvous` orders the
replicas for it, :mod:`.load_share` applies the policy (``prefix``, ``least-loaded``,
``round-robin``) with bounded loads, :mod:`.health` takes failing replicas out of rotation and
:mod:`.health_checks` probes them, :mod:`.retry_rule` says when a failed send may go to another
replica, :mod:`.replica_stats` counts per replica, :mod:`.shared_load` shares in-flight counts
between proxies, :mod:`.replica_set` ties them together. Nothing here sends a request.
See docs/several-engines.md.
"""
