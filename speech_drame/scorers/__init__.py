"""Scorers: models that rate a clip on the dimensions of a config."""
