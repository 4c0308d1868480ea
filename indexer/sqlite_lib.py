"""The SQLite module the index and history use: the newest SQLite at hand.

Python's ``sqlite3`` links the system's library (3.40 on Debian 12). Where the
``pysqlite3-binary`` wheel installs (Linux x86_64, a dependency there), it is the same
module built with a newer SQLite, whose full-text ranking is faster: ranking the 2,711
notes of 100,000 that hold a word took 2.76 ms of SQLite 3.40 and 1.89 ms of 3.51 (the
search's statement, ``bm25()`` twice a note). Both read and write the same files;
sqlite-utils (a test's) takes the wheel's module the same way. Whatever opens the index's or
history's files in the same process (the tests too) imports this module: two copies of
SQLite in one process share none of their POSIX locks, and one's reader saw a snapshot
older than the other's last commit (https://sqlite.org/howtocorrupt.html, 2.2.1).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3
else:
    try:
        sqlite3 = importlib.import_module("pysqlite3.dbapi2")
    except ImportError:
        import sqlite3

__all__ = ["sqlite3"]
