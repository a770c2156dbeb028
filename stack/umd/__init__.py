"""The user-mode driver: the instruction translator, in process and as a gRPC service.

Imports only ``stack.kmd`` below it.
"""
