"""`python -m bench`: see `bench.runner.parse_args` for the options."""

import sys

from bench.runner import main

sys.exit(main())
