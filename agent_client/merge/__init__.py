"""Merging one knowledge entry into a vault: the LLM tool loop, its tools, the
deterministic fallback, images, and the journal that undoes a failed merge.

The writer composes these modules; nothing here imports the writer or the CLI.
"""
