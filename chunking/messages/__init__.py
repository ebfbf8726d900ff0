"""Queue messages, each a codec in one envelope (``envelope``: a JSON object whose ``"type"`` and ``"schema"``
say what it is): chunk batches from stage 1 to stage 2 (``batches``, with the claim check for batches over the
queue's size limit), field updates on the same queue (``fields``: metadata or access lists changed, not the
bytes) and stage-1 jobs (``jobs``: "run stage 1 on this blob"). Besides these, the completion events told to
applications (``events``: CloudEvents to an Event Grid topic or a storage queue, docs/events.md). A chunk batch
and a stage-1 job may carry the W3C trace context of their document's trace (``"trace"``, optional).

May import: core, errors, storage.
"""
