"""The Python API: `analyse` and the `Analysis` object, with what it displays, tables, caches and saves."""
