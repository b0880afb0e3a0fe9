"""``python -m mindbank.cli``: the ``mindbank`` command."""

import sys

from mindbank.cli import main

sys.exit(main())
