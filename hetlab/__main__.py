"""Command line: ``python -m hetlab --help``."""
from hetlab.book.cli import main

raise SystemExit(main())
