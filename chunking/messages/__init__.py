"""Queue messages between the stages."""
