"""`python -m bench.cuda`: see `bench.cuda.cli.parse_args` for the options."""

import sys

from bench.cuda.cli import main

sys.exit(main())
