"""The history of every vault file: versions, content-addressed blobs, retention.

``store.HistoryStore`` is the database (the only module besides the index allowed to
talk to SQLite); ``codec`` stores bytes as compressed blobs and deltas; ``schema``
creates and checks the file, refusing (never resetting) one it cannot use.
"""
