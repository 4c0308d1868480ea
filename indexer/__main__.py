"""``python -m indexer``: the same as the ``indexer`` command."""

from indexer.cli import main
from shared.cli_usage import exit_with

exit_with(main())
