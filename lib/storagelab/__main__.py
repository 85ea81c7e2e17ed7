"""``python -m storagelab``: the same as the ``storagelab`` command."""

from storagelab.cli import app

app()
