"""``python -m chunking``: see ``chunking.cli``."""

import sys

from chunking.cli import main

sys.exit(main())
