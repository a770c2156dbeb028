"""The reference five-layer stack: adapter → compiler → runtime → UMD → KMD shim."""

__version__ = "0.1.0"
