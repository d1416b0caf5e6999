"""Proctor: an independent supervisor for AI-agent work."""

__version__ = "0.1.0"
