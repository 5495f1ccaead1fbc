"""A pool of replicas behind one upstream: which replica serves a request, and what each did.

:mod:`.routing_key` names the prefix a request is routed by, :mod:`.head_assign` places the apps'
heads evenly, :mod:`.rendezvous` orders the replicas for a key, :mod:`.load_share` applies the
policy (``prefix``, ``least-loaded``, ``round-robin``) with bounded loads, :mod:`.health` and
:mod:`.health_checks` take failing replicas out of rotation, :mod:`.retry_rule` says when a failed
send may go to another replica, :mod:`.replica_stats` counts per replica, :mod:`.shared_load`,
:mod:`.shared_heads` and :mod:`.redis_board` share load and heads between proxies,
:mod:`.replica_set` ties them together, :mod:`.upstream_pools` holds a proxy's pools. Nothing here
sends a client's request (:mod:`proxy.replica_send` does). See docs/several-engines.md.
"""
