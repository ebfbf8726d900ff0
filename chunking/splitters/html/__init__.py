"""HTML splitters."""
