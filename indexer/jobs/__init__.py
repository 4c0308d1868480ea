"""Background work of the indexer: the optional model, directory summaries, maintenance,
recall. Jobs use the vault and the index; they never import the web layer or the CLI."""
