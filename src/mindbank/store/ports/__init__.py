"""The Store port by feature: one protocol per job the engine asks of a database.

:class:`mindbank.store.base.Store` combines them; a component that needs one feature only may type its argument with
that feature's protocol. Each module holds the protocol and the records its methods take and return:
``banks``, ``memories`` (retained documents and their facts), ``recall`` (the searches), ``mental_models`` (models,
their history and staleness reads), ``governance`` (refresh spend), ``knowledge`` (the knowledge-base tree),
``operations`` (the queue, claims and administration), ``consolidation``, ``llm_requests``, ``documents``,
``directives``, ``webhooks``, ``health`` (schema and worker heartbeats), ``api_keys``, ``transfer`` (bank export and
import) and ``files`` (stored files); ``errors`` holds the failures every feature may raise.
"""
