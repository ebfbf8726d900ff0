"""One document."""
