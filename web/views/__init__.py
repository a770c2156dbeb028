"""Page and API models built from :mod:`web.data`: plain dicts, shared by HTML and JSON."""
