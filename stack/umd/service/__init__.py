"""The UMD as a gRPC service (``contracts/umd.proto``) and its client.

``umd_pb2*`` are generated from the contract by :mod:`stack.umd.service.codegen`.
"""
