"""``python -m turnip_fdm``: the same command line as ``turnip-fdm``."""

from turnip_fdm.cli import run

run()
