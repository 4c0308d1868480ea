"""Code that both the indexer and the agent client import: models, errors, frontmatter."""
