"""The pipeline."""
