"""Merging one knowledge entry into a vault: the LLM tool loop, its tools, the
deterministic fallback, images, and the journal of a merge's writes (each with the
entry's reason; a failed merge is undone by the server's undo of the entry).

The writer composes these modules; nothing here imports the writer or the CLI.
"""
