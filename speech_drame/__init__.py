"""speech-drame: human-aligned evaluation of spoken role-play (Speech-DRAME and neighbours)."""

__version__ = "0.1.0"
