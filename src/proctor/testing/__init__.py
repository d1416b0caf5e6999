"""Test doubles shipped with Proctor for tests and offline demos (never used by default)."""
