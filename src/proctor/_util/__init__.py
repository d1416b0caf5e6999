"""Small helpers shared by every layer: paths, time, processes and text on one line."""
