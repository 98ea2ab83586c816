"""Helpers shared by the integration and differential suites.

See README.md in this directory: resp.py (RESP encoder and exact-bytes reader), server.py
(server processes), expect.py (expected replies), types.py (keys of other types),
differ.py (the differential engine).
"""
