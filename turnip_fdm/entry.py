"""The console script's entry point (``turnip-fdm`` -> ``turnip_fdm.entry:run``; also
``python -m turnip_fdm``): its first statements make Ctrl-C exit 130 with the one line
``turnip-fdm: interrupted``, before anything else is imported (only :mod:`os`, loaded by the
interpreter's start-up, and :mod:`signal`, a thin layer over the built-in ``_signal``).  Then
it imports the command line (:mod:`turnip_fdm.cli`: argparse, the packages, numpy), whose
:func:`~turnip_fdm.cli.run` keeps Ctrl-C on the same terms while a command runs and ignores it
once the command has ended.  A process started with SIGINT ignored (a background job of a
script, ``cmd &``) keeps ignoring it, as Python itself does.

What is left to Python's own default is the interpreter's start-up before this module (about
20 ms unloaded: ``site`` and the console script's ``import sys``)."""

import os
import signal


def _exit_interrupted(signum: int, frame: object) -> None:
    try:
        os.write(2, b"turnip-fdm: interrupted\n")
    finally:
        os._exit(130)


if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:  # started ignoring it (`cmd &` in a script): stays so
    signal.signal(signal.SIGINT, _exit_interrupted)

from turnip_fdm.cli import run  # noqa: E402 - after the handler, on purpose

__all__ = ["run"]
