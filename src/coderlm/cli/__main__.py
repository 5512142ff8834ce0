"""``python -m coderlm.cli``: the same as the ``coderlm`` command."""

import sys

from coderlm.cli.main import main

sys.exit(main())
