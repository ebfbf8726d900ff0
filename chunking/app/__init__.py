"""The entry points: ``functions`` (what each Azure Function runs once ``function_app.py`` has declared its
bindings: stage 1 on a blob event or a job message, stage 2 on a chunk batch, the reconcile timer, poison
handling) and ``cli`` (the ``chunking`` command). Both build their adapters with ``chunking.services`` and run the
pipeline of ``chunking.pipeline``; nothing below this package knows how it is called.

May import: everything.
"""
