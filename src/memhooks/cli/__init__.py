"""The memhooks command line: thin click commands over the library."""
