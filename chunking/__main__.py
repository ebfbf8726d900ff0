"""``python -m chunking``: see ``chunking.cli`` (closed pipes and Ctrl-C are handled by ``main``)."""

import sys

from chunking.cli import main

sys.exit(main(prog="python -m chunking"))
