"""The ``proctor`` command line: thin commands over the library."""
