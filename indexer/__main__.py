"""``python -m indexer``: the same as the ``indexer`` command."""

import sys

from indexer.cli import main

sys.exit(main())
