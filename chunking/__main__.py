"""``python -m chunking``: see ``chunking.app.cli`` (closed pipes and Ctrl-C are handled by ``main``)."""

import sys

from chunking.app.cli import main

sys.exit(main(prog="python -m chunking"))
