"""The entry points."""
