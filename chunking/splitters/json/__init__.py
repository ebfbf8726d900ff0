"""JSON splitters."""
