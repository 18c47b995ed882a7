"""``python -m spotree``: the same as the ``spotree`` command."""

import sys

from .cli import main

sys.exit(main())
