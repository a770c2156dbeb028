"""The web UI over the map: role views served by FastAPI. Imports ``mapper`` only."""
