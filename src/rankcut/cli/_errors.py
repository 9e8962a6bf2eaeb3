"""How every ``rankcut`` command reports bad input: one ``error: ...`` line, exit status 2, the
library's parameters named by their flags.

:func:`flag` is the one way a library parameter becomes its flag (``batch_size`` →
``--batch-size``). Three places use it: a :class:`rankcut.errors.ParamError` whose parameter is
one of the command's ``flags`` is shown with the flag in its place (``batch_size must ...`` →
``--batch-size must ...``); :func:`cli_words` rewrites ``keyword='value'`` inside a message; and
:func:`option_names` builds the table that ``rankcut audit`` installs for the audit's messages
(:data:`rankcut.audit.options.OPTION_NAMES`), which name arguments anywhere in a sentence.
"""

from __future__ import annotations

import errno
import os
import re
import sys
import warnings
from collections.abc import Collection, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext, redirect_stdout
from pathlib import Path
from typing import Any, NoReturn

import typer

from rankcut.errors import ParamError

__all__ = ["cli_words", "confidence_delta", "fail", "flag", "input_errors", "option_names",
           "resource_message", "say_warnings", "user_errors"]

#: library keywords that are options of cut, evaluate and train under the same name: a message that
#: says ``missing='keep'`` is shown as ``--missing keep``
_KEYWORDS = ("missing", "threshold", "ordering", "folds", "seed", "fit_metric", "recall_base", "baseline",
             "test", "alpha", "score_feature")


def _keyword(names: Collection[str]) -> re.Pattern[str]:
    """``name='value'`` or ``name=value`` for each of ``names``, as a library message writes it."""
    return re.compile(rf"(?<![\w-])({'|'.join(names)})=(?:'([^']*)'|([^\s,;:)]+))")


#: the modules of the torch extra (a checkpoint is read with both; the cutters say it themselves,
#: rankcut.nn.require_torch)
_TORCH = ("torch", "safetensors")

#: the errno values of a resource failure: a full disk or quota, a file too large, no memory
_RESOURCE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.ENOMEM})


def resource_message(exc: BaseException) -> str | None:
    """One line for a resource failure, None for any other error. A MemoryError's message names
    the size that ran out where the code knew it (``ran out of memory reading 100,000,000 lines
    of run.txt``, numpy's ``Unable to allocate 7.45 GiB for an array with shape ...``); an OSError
    of :data:`_RESOURCE_ERRNOS` names the file written. rankcut writes its files atomically, so
    the failure leaves none half-written."""
    if isinstance(exc, MemoryError):
        text = " ".join(str(exc).split())
        if not text.startswith("ran out of memory"):
            text = "ran out of memory" + (f" ({text})" if text else "")
        return f"{text}; free memory, or run it on part of the input (fewer queries)"
    if isinstance(exc, OSError) and exc.errno in _RESOURCE_ERRNOS:
        where = f" writing {exc.filename}" if exc.filename else ""
        return (f"{exc.strerror or os.strerror(exc.errno)}{where}; nothing was left half-written: free "
                "space and run it again")
    return None


def say_warnings(messages: Iterable[str]) -> None:
    """Each message once (an input located twice, a cutter fitted per fold), as a ``warning: ...``
    line on stderr."""
    for message in dict.fromkeys(messages):
        typer.echo(f"warning: {message}", err=True)


def confidence_delta(delta: float) -> float:
    """``--delta``, the chance the certificate is wrong, checked (in (0, 1)) and refused from 0.5 up:
    ``--delta 0.95`` meant as 95% confidence certified at 5% confidence, without a word."""
    from rankcut.certify._validate import check_delta, percent  # (rankcut.certify loads scipy)

    d = check_delta(delta, "--delta")
    if d >= 0.5:
        meant = (f"for {percent(d)} confidence give --delta {1 - d:.3g}" if d > 0.5 else
                 "give --delta below 0.5 (0.05 for 95% confidence)")
        raise ValueError(f"--delta is the chance the certificate is wrong (1 − confidence), so {d:g} "
                         f"would claim only {percent(1 - d)} confidence: {meant}")
    return d


def stdout_aside(out: Path | None) -> AbstractContextManager[Any]:
    """While ``--out`` is stdout (``-``, ``/dev/stdout``: written through, a pipe or device), what a
    command says goes to stderr, so that stdout holds the file alone."""
    from rankcut.data.io import writes_through

    return redirect_stdout(sys.stderr) if out is not None and writes_through(out) else nullcontext()


def fail(message: str) -> NoReturn:
    """Print ``error: message`` on stderr and end the command with exit status 2."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def flag(param: str) -> str:
    """The command-line flag of a library parameter: ``batch_size`` → ``--batch-size``."""
    return f"--{param.replace('_', '-')}"


def option_names(params: Iterable[str], **spelled: str) -> dict[str, str]:
    """Library names as a command spells them: each of ``params`` by its :func:`flag`, the
    keywords of ``spelled`` as given (an option named otherwise, a step named by its command)."""
    return {**{p: flag(p) for p in params}, **spelled}


def _message(exc: BaseException, flags: Collection[str]) -> str:
    """The message of ``exc``, a ParamError on one of ``flags`` naming the flag instead."""
    text = str(exc)
    if isinstance(exc, ParamError) and exc.param in flags and text.startswith(exc.param):
        return flag(exc.param) + text[len(exc.param):]
    return text


def cli_words(message: str, keywords: Collection[str] = ()) -> str:
    """A library message in the words of the command line: one line, ``keyword='value'`` shown as
    ``--keyword value`` for the options cut, evaluate and train share, and ``keywords``, a
    command's own (train: ``val_fraction``, which the others cannot set)."""
    text = " ".join(str(message).split())
    return _keyword((*_KEYWORDS, *keywords)).sub(
        lambda m: f"{flag(m[1])} {m[2] if m[2] is not None else m[3]}", text)


@contextmanager
def user_errors(flags: Collection[str] = ()) -> Iterator[None]:
    """A ValueError (bad input, a refused step), OSError (a missing or unreadable file) or resource
    failure (:func:`resource_message`) raised inside ends the command through :func:`fail`. A
    BrokenPipeError — stdout closed by its reader, as in ``| head`` — is no input error: it is left
    to click, which ends quietly."""
    try:
        yield
    except BrokenPipeError:
        raise
    except (ValueError, OSError, MemoryError) as exc:
        fail(resource_message(exc) or _message(exc, flags))


@contextmanager
def input_errors(flags: Collection[str] = (), keywords: Collection[str] = ()) -> Iterator[None]:
    """:func:`user_errors` for the commands that read runs (cut, evaluate, train): a missing
    optional dependency (ImportError) is an input error too, messages are in :func:`cli_words`
    (with the command's own ``keywords``),
    and warnings (e.g. queries dropped from the qrels) are shown as ``warning: ...`` lines."""
    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        except BrokenPipeError:
            raise  # stdout closed by the reader (`| head`): click ends quietly, not an input error
        except (ValueError, OSError, ImportError, MemoryError) as exc:
            error = resource_message(exc) or _message(exc, flags) or type(exc).__name__
            if isinstance(exc, ModuleNotFoundError) and (exc.name or "").partition(".")[0] in _TORCH:
                error += ": a trained model needs PyTorch, an optional extra: pip install 'rankcut[torch]'"
    say_warnings(cli_words(str(w.message), keywords) for w in caught)   # a cutter warns per fold
    if error is not None:
        fail(cli_words(error, keywords))
