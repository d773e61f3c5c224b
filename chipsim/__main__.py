"""``python -m chipsim``: see :mod:`chipsim.cli`."""

import sys

from chipsim.cli import main

sys.exit(main())
