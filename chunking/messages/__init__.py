"""Queue messages between the stages, each a codec for one queue: chunk batches from stage 1 to stage 2
(``batches``, with the claim check for batches over the queue's size limit) and stage-1 jobs (``jobs``: "run
stage 1 on this blob").

May import: core, errors, storage.
"""
