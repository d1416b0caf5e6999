"""Small helpers shared by every layer: paths and time."""
