"""``python -m turnip_fdm``: the same command line as ``turnip-fdm`` (the Ctrl-C handler first)."""

from turnip_fdm.entry import run

run()
