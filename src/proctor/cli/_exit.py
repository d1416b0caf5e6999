"""Exit statuses every command uses."""

EXIT_OK = 0
EXIT_PARTIAL = 1
"""The command finished, but some input could not be read or the store refused."""
EXIT_USAGE = 2
"""A usage or configuration mistake, including an unknown id."""
