"""Modules imported on a worker thread, so that a host's event loop keeps running.

The MCP client (fastmcp and the MCP SDK: 1-2 s) and the OpenAI SDK (0.5 s) are imported
when first used (``connection``, ``merge.knowledge``), which is inside the host's event
loop: imported there, the first memory write of an agent that streams its answer froze
the stream for as long. Imported on a thread, the loop goes on meanwhile (the import
hands the interpreter back every few milliseconds); the caller then imports the module
as usual, from ``sys.modules``, typed.
"""

from __future__ import annotations

import asyncio
import importlib
import sys


async def import_off_loop(name: str) -> None:
    """Import module ``name`` on a worker thread, unless it is loaded already."""
    module = sys.modules.get(name)
    spec = getattr(module, "__spec__", None)
    if module is not None and not getattr(spec, "_initializing", False):
        return
    await asyncio.to_thread(importlib.import_module, name)
