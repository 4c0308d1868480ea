"""Benchmarks: each module prints a table of figures beside a floor measured in the same run."""
