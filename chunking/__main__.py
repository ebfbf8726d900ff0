"""``python -m chunking``: see ``chunking.cli``."""

import os
import sys

from chunking.cli import main

try:
    sys.exit(main())
except BrokenPipeError:  # output piped into `head` and the like: stop quietly, as Unix tools do
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(141)
