"""Intake's limits, in a module that imports nothing: the server's request-body reader
checks them before any adapter is loaded."""

MAX_PAYLOAD_BYTES = 16 * 1024 * 1024
"""The largest request body the intake accepts (16 MiB); larger ones are refused whole."""
