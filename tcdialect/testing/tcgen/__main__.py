"""``python -m tcdialect.testing.tcgen``: see `tcdialect.testing.tcgen.cli`."""

import sys

from tcdialect.testing.tcgen.cli import main

sys.exit(main())
