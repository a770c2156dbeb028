"""Ingest: read a stack's code, protos, docs and contracts into typed records.

The parsers (``code``, ``proto``, ``docs``, ``contracts``) are pure readers; building the graph
and the vector index on top of them follows.
"""
