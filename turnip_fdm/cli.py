"""``turnip-fdm``: the command-line shell over the packages.

Every sub-command is registered explicitly from its package's ``cli`` module (a module that
fails to import fails the command, loudly; a command imports only the module that registers
it, ``--help`` every module: :data:`COMMAND_MODULES`), and one handler maps the refusals of
:mod:`turnip_base.errors` to their exit status and a single line:

=====================  ======  ===============================================
outcome                status  standard error
=====================  ======  ===============================================
success                0       nothing (results on standard output)
check failed           1       what differed (``mipmap run`` mismatch, …)
bad input              2       ``turnip-fdm: error: FIELD: RULE``
turnip would assert    2       ``turnip-fdm: error: FIELD: RULE``
path not modelled      2       ``turnip-fdm: error: FIELD: RULE``
device lacks something 2       ``turnip-fdm: not supported: WHAT``
standard output fails  2       ``turnip-fdm: error: standard output: cannot write (REASON)``
reader went away       0       nothing (``turnip-fdm plan … | head``)
bug of turnip-fdm      1       ``turnip-fdm: internal error: …`` (``--traceback`` for the trace)
interrupted            130     ``turnip-fdm: interrupted``
=====================  ======  ===============================================

Argument errors (argparse's own) get the same one-line form with the flag as FIELD.
"""

from __future__ import annotations

# Only the standard library and the bottom layer's error contract at the top: run() imports the
# packages (numpy and the models take about 0.3 s) under its exiting Ctrl-C handler.
import argparse
import errno
import gc
import os
import signal
import sys
import traceback
from collections.abc import Callable, Sequence
from types import FrameType
from typing import Any, NoReturn, TextIO, cast

from turnip_base.errors import EXIT_REFUSED, ScenarioError

PROG = "turnip-fdm"
TRACEBACK_FLAG = "--traceback"
#: the status and the one line of a Ctrl-C, at any moment
EXIT_INTERRUPTED = 130
INTERRUPTED_LINE = f"{PROG}: interrupted"

Registrar = Callable[[Any], None]


class CommandLineParser(argparse.ArgumentParser):
    """argparse with the project's error contract: a usage error raises :class:`ScenarioError`
    (one line, exit 2) instead of printing the usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise ScenarioError(*_split_argparse_message(message))


def _split_argparse_message(message: str) -> tuple[str, str]:
    """``argument --view: invalid int value: 'x'`` -> (``--view``, ``invalid int value: 'x'``)."""
    if message.startswith("argument "):
        field, _, rule = message[len("argument "):].partition(": ")
        if rule:
            return field.split("/")[0], rule
    return "arguments", message


def _fdm_cli() -> Registrar:
    from fdm import cli
    return cli.register


def _layout_cli() -> Registrar:
    from layout_solver import cli
    return cli.register


def _demo_cli() -> Registrar:
    from . import demo
    return demo.register


def _diff_cli() -> Registrar:
    from . import diff
    return diff.register


def _mipmap_cli() -> Registrar:
    from mipmap import cli
    return cli.register


def _vk_cli() -> Registrar:
    from vk_tests import cli
    return cli.register


def _box_cli() -> Registrar:
    from turnip_box import cli
    from vk_tests.fdm import cases as fdm_cases
    return lambda sub: cli.register(sub, fdm_scenes=fdm_cases.scenarios)


#: every sub-command module, in help order: the commands it registers, and its import
COMMAND_MODULES: tuple[tuple[tuple[str, ...], Callable[[], Registrar]], ...] = (
    (("plan", "check"), _fdm_cli), (("layout",), _layout_cli), (("demo",), _demo_cli), (("diff",), _diff_cli),
    (("mipmap",), _mipmap_cli), (("vk",), _vk_cli), (("box",), _box_cli),
)


def command_of(args: Sequence[str]) -> str | None:
    """The sub-command a command line names (its first word, flags before it aside from
    ``--traceback``), or None (``--help``, nothing, or a flag first)."""
    words = [a for a in args if a != TRACEBACK_FLAG]
    return words[0] if words and not words[0].startswith("-") else None


def registrars(command: str | None = None) -> tuple[Registrar, ...]:
    """The ``register(subparsers)`` function of the sub-command modules, in help order,
    imported explicitly: a module that cannot be imported makes a command that imports it fail.
    ``command``: only the module that registers it (``layout`` imports the layout solver and
    the models, not the device suite, the box or the mip-chain generators: about 0.2 s less
    start-up); None, or a word no module registers (argparse's "invalid choice" lists every
    command): every module."""
    loads = [load for names, load in COMMAND_MODULES if command in names] or [load for _, load in COMMAND_MODULES]
    return tuple(load() for load in loads)


def build_parser(command: str | None = None) -> CommandLineParser:
    """The command line's parser: every sub-command, or (``command``) only the module that
    registers that one (:func:`registrars`)."""
    p = CommandLineParser(prog=PROG, description="Exact model of turnip's fragment-density-map logic: plan "
                                                 "render passes, lay out subsampled images, check devices.")
    p.add_argument(TRACEBACK_FLAG, action="store_true",
                   help="on an internal error print the Python traceback (accepted anywhere on the line)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandLineParser)
    sub.required = True
    for register in registrars(command):
        register(sub)
    return p


def _fail(label: str, message: str) -> None:
    print(f"{PROG}: {label}: {' '.join(message.split())}", file=sys.stderr)


#: the FIELD of a refusal to write standard output
STDOUT_FIELD = "standard output"


def _discard_stdout(stream: object) -> None:
    """Point ``stream``'s descriptor at /dev/null, so the bytes still buffered for it are dropped
    quietly (the interpreter's shutdown flushes standard output once more)."""
    try:
        fd = stream.fileno()  # type: ignore[attr-defined]
        null = os.open(os.devnull, os.O_WRONLY)
    except (AttributeError, OSError, ValueError):
        return
    try:
        os.dup2(null, fd)
    except OSError:
        pass
    finally:
        os.close(null)


def _stdout_refusal(stream: object, e: OSError) -> ScenarioError:
    _discard_stdout(stream)
    return ScenarioError(STDOUT_FIELD, f"cannot write ({e.strerror or e})")


class CheckedStdout:
    """``sys.stdout`` while a command runs: an ``OSError`` on writing it - a full disk
    (``> /dev/full``), a descriptor opened read-only - is the user's condition, a
    :class:`ScenarioError` ``standard output: cannot write (REASON)``; ``BrokenPipeError`` (the
    reader went away, ``| head``) passes through for :func:`main` to end quietly."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as e:
            raise _stdout_refusal(self.stream, e) from None

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            raise _stdout_refusal(self.stream, e) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit status (see the module docstring).  Standard output is
    flushed before it returns, so a write error of it is part of the status."""
    args_in = list(sys.argv[1:] if argv is None else argv)
    show_traceback = TRACEBACK_FLAG in args_in
    args_in = [a for a in args_in if a != TRACEBACK_FLAG]
    stdout = sys.stdout
    if stdout is None:  # started with standard output closed (`>&-`): refused before any work
        _fail("error", f"{STDOUT_FIELD}: cannot write ({os.strerror(errno.EBADF)})")
        return EXIT_REFUSED
    sys.stdout = cast(TextIO, CheckedStdout(stdout))
    try:
        return _main(args_in, show_traceback)
    finally:
        sys.stdout = stdout


def _main(args_in: list[str], show_traceback: bool) -> int:
    try:
        from turnip_base.errors import EXIT_FAILURE, TurnipFdmError
    except KeyboardInterrupt:
        return _interrupted()
    try:
        try:
            parser = build_parser(command_of(args_in))
        except ImportError as e:
            _fail("internal error", f"a sub-command module cannot be imported ({e.name or e}): {e} "
                                    "- the installation is broken")
            if show_traceback:
                traceback.print_exc()
            return EXIT_FAILURE
        try:
            args = parser.parse_args(args_in)
        except SystemExit:  # --help printed: exits once standard output is flushed (a failure: the line)
            sys.stdout.flush()
            raise
        status = int(args.func(args))
        sys.stdout.flush()  # a full standard output is an error of this command, reported here
        return status
    except TurnipFdmError as e:
        _fail(e.label, str(e))
        return e.exit_status
    except BrokenPipeError:
        # the reader went away (`turnip-fdm plan … | head`): not an error of ours
        return 0
    except KeyboardInterrupt:
        return _interrupted()
    except Exception as e:  # noqa: BLE001 - the last line of defence: one line, not a traceback
        if show_traceback:
            traceback.print_exc()
        _fail("internal error", f"{type(e).__name__}: {e} (a bug of turnip-fdm; rerun with "
                                f"{TRACEBACK_FLAG} for the traceback)")
        return EXIT_FAILURE


def _interrupted() -> int:
    """A Ctrl-C that reached :func:`main`: the one line, status 130."""
    print(INTERRUPTED_LINE, file=sys.stderr)
    return EXIT_INTERRUPTED


def _exit_interrupted(signum: int, frame: FrameType | None) -> None:
    """SIGINT while nothing can catch a KeyboardInterrupt (the imports, the interpreter's
    shutdown): the one line, then status 130 at once (``os._exit``: no traceback, no waiting)."""
    try:
        os.write(2, (INTERRUPTED_LINE + "\n").encode())
    finally:
        os._exit(EXIT_INTERRUPTED)


def _final_flush(status: int) -> int:
    """Flush standard output once more after :func:`main` (nothing should be left); a reader that
    went away is quiet, any other write error is the one ``standard output`` line, status 2."""
    stream = sys.stdout
    if stream is None:
        return status
    try:
        stream.flush()
    except BrokenPipeError:  # the reader went away: nothing more to say to it
        _discard_stdout(stream)
    except OSError as e:
        _discard_stdout(stream)
        if status == 0:
            _fail("error", f"{STDOUT_FIELD}: cannot write ({e.strerror or e})")
            return EXIT_REFUSED
    return status


def _run_main(handle_sigint: bool) -> int:
    try:
        if handle_sigint:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        return main()
    except KeyboardInterrupt:  # one that arrived inside main's own handlers
        signal.signal(signal.SIGINT, _exit_interrupted)
        return _interrupted()


def run() -> NoReturn:
    """The command line's entry point, under :mod:`turnip_fdm.entry` (the console script
    ``turnip-fdm`` and ``python -m turnip_fdm``, which install the exiting Ctrl-C handler before
    any other import).

    Ctrl-C at any moment exits 130 with one line ``turnip-fdm: interrupted``: while the packages
    are imported the handler exits at once; while a command runs, SIGINT raises
    ``KeyboardInterrupt`` as usual (``vk run`` writes the results so far) and :func:`main` turns
    it into the line; once the command has ended (its status known, its files written, standard
    output flushed) Ctrl-C is ignored, so the interpreter's shutdown cannot print a traceback or
    die by the signal.  A process started with SIGINT ignored (``cmd &`` in a script) keeps
    ignoring it.
    """
    handle_sigint = signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
    if handle_sigint:
        signal.signal(signal.SIGINT, _exit_interrupted)
    try:
        registrars(command_of(sys.argv[1:]))  # the heavy imports, under the exiting handler
    except Exception:  # noqa: BLE001 - main() imports them again and says what failed, in one line
        pass
    status = _run_main(handle_sigint)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    status = _final_flush(status)
    # the objects of the run frozen: the interpreter's exit would go through all of them once
    # more in its last full collection (`layout` of a 2 x 3840^2 pass: 20-40 ms, issue 22), and
    # nothing is left to finalize (files closed, standard output flushed); atexit still runs
    gc.freeze()
    sys.exit(status)
