"""``python -m icsim`` is the ``icsim`` command."""

import sys

from icsim.experiments.cli import main

sys.exit(main())
