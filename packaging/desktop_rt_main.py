"""Entry point of the frozen app: the same ``desktop-rt`` command as the pip install's script."""

import sys

from desktop_rt.cli import main

if __name__ == "__main__":
    sys.exit(main())
