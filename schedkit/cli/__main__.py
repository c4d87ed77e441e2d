"""``python -m schedkit.cli``: the command line."""

import sys

from schedkit.cli.main import main

sys.exit(main())
