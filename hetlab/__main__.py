"""Command line: ``python -m hetlab --help``."""
from hetlab.cli import main

raise SystemExit(main())
