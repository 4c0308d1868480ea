"""Helpers shared by test modules (tests never import each other)."""
