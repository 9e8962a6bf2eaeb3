"""Input checks and output shaping shared by the certificate modules (no statistics here).

Every check raises ``ValueError`` naming the argument, and for a sequence the first offending
entry (``counts[2]``), so a caller can tell which input to fix. Two shapes of family argument
occur in the package:

* array families (:func:`as_family`): a scalar for one generator (the certificate's value is then
  a number) or a 1-D sequence with one entry per member (the value is a tuple, see :func:`out`);
* plain Python sequences checked entry by entry (:func:`as_sequence` with :func:`check_count`).

Error allocations follow the union bound: :func:`allocation` defaults to ``δ/|G|`` per member and
otherwise requires ``Σ_g δ_g ≤ δ``, up to :data:`SUM_RTOL`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

# Σ δ_g ≤ δ is checked with this relative slack, so that floating-point rounding of a declared
# split (three shares of 0.05/3, five of 0.01 against 0.05) does not reject it.
SUM_RTOL = 1e-12

_INT64_MAX = np.iinfo(np.int64).max


def _plain_value(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (list, tuple)):
        return type(x)(_plain_value(v) for v in x)
    return x


def shown(x: Any) -> str:
    """``repr`` of a value for an error message, with numpy scalars and arrays written as plain
    Python numbers and lists (``-1``, not ``np.int64(-1)``)."""
    return repr(_plain_value(x))


def _is_real(x: Any) -> bool:
    """A real scalar: Python or numpy int/float, but not a bool."""
    return not isinstance(x, (bool, np.bool_)) and isinstance(x, (int, float, np.integer, np.floating))


def check_delta(delta: Any, name: str = "delta") -> float:
    """An error probability in the open interval (0, 1). A certificate's ``delta`` of 0.5 or more is
    warned of (:class:`UserWarning`): ``delta=0.95`` meant as 95% confidence certifies at 5% (the
    command line refuses it; a call may mean it, e.g. a median)."""
    if not _is_real(delta):
        raise ValueError(f"{name} must be a number in (0, 1), got {shown(delta)}")
    d = float(delta)
    if not 0.0 < d < 1.0:
        raise ValueError(f"{name} must lie in (0, 1), got {shown(delta)}{percent_hint(delta)}")
    if d >= 0.5 and name == "delta":
        warnings.warn(f"delta={d:g} is the chance the certificate is wrong (1 − confidence): it claims only "
                      f"{percent(1 - d)} confidence; for 95% confidence pass delta=0.05", UserWarning,
                      stacklevel=3)
    return d


def check_count(x: Any, name: str, minimum: int = 0) -> int:
    """One integer ``>= minimum`` (a count, a sample or pool size); bools and floats are refused."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        what = "non-negative integer" if minimum == 0 else f"integer >= {minimum}"
        raise ValueError(f"{name} must be one {what}, got {shown(x)}")
    if x < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {int(x)}")
    return int(x)


def check_number(x: Any, name: str) -> float:
    """One finite real number."""
    if not _is_real(x):
        raise ValueError(f"{name} must be a number, got {shown(x)}")
    v = float(x)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {shown(x)}")
    return v


def check_positive(x: Any, name: str) -> float:
    """One finite real number ``> 0`` (a scale, a prior mean)."""
    if not _is_real(x) or not math.isfinite(float(x)) or float(x) <= 0:
        raise ValueError(f"{name} must be a positive number, got {shown(x)}")
    return float(x)


def percent(share: float) -> str:
    """A share as a percentage to three significant digits: ``0.1%`` for 0.001, not ``0%``."""
    return f"{share * 100:.3g}%"


def percent_hint(x: Any) -> str:
    """For a share given as a percentage (``95`` for 0.95), the hint an error message ends with."""
    if not _is_real(x) or not 2.0 <= float(x) <= 100.0:   # 1.2 reads as a slip, not as 1.2%
        return ""
    return f" (a share, not a percentage: {float(x) / 100:g} for {float(x):g}%)"


def check_fraction(x: Any, name: str, *, open_left: bool = False) -> float:
    """A number in [0, 1], or in (0, 1] with ``open_left`` (a mass, a sensitivity)."""
    v = check_number(x, name)
    if not (0.0 < v <= 1.0 if open_left else 0.0 <= v <= 1.0):
        raise ValueError(f"{name} must lie in {'(0, 1]' if open_left else '[0, 1]'}, got {shown(x)}"
                         + percent_hint(x))
    return v


def as_family(x: Any, name: str, *, integer: bool, scalar: bool = True) -> tuple[NDArray[Any], bool]:
    """A family argument as a non-empty 1-D array, and whether it was given as a scalar.

    :param integer: counts and sizes: whole numbers ``>= 0`` (integral floats such as ``300.0``
        are accepted), returned as ``int64``; otherwise finite numbers of any sign, as ``float``.
    :param scalar: whether a scalar (a one-member family) is allowed.
    """
    what = "a number or a non-empty 1-D sequence" if scalar else "a non-empty 1-D sequence"
    try:
        arr = np.asarray(x)
    except ValueError:  # ragged nesting
        raise ValueError(f"{name} must be {what}, got {shown(x)}") from None
    was_scalar = arr.ndim == 0
    if arr.ndim > 1 or arr.size == 0 or (was_scalar and not scalar):
        raise ValueError(f"{name} must be {what}, got {shown(x)}")
    arr = np.atleast_1d(arr)

    def entry(i: int) -> str:
        v = arr[i].item()
        return f"{v!r}" if was_scalar else f"{name}[{i}]={v!r}"

    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold {'integers' if integer else 'numbers'}, got {shown(x)}")
    if arr.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            raise ValueError(f"{name} must be finite, got {entry(int(bad[0]))}")
    if not integer:
        return arr.astype(float), was_scalar
    if arr.dtype.kind in "uf":
        bad = np.flatnonzero((arr != np.floor(arr)) | (arr > _INT64_MAX))
        if bad.size:
            raise ValueError(f"{name} must hold integers, got {entry(int(bad[0]))}")
    arr = arr.astype(np.int64)
    bad = np.flatnonzero(arr < 0)
    if bad.size:
        raise ValueError(f"{name} must be >= 0, got {entry(int(bad[0]))}")
    return arr, was_scalar


def as_sequence(x: Any, name: str, unit: str) -> list[Any]:
    """A non-empty list or 1-D array with one entry per ``unit``, as a list (entries unchecked)."""
    if (isinstance(x, (str, bytes)) or not isinstance(x, (Sequence, np.ndarray))
            or (isinstance(x, np.ndarray) and x.ndim != 1)):
        raise ValueError(f"{name} must be a sequence with one entry per {unit}, got {shown(x)}")
    values = list(x)
    if not values:
        raise ValueError(f"{name} must have at least one {unit}")
    return values


def same_size(m: int, units: str, **arrays: NDArray[Any]) -> None:
    """Every array has ``m`` entries, one per member (``units``: e.g. ``"members"``, ``"strata"``)."""
    for name, arr in arrays.items():
        if arr.size != m:
            raise ValueError(f"{name} has {arr.size} entries but there are {m} {units}")


def member_names(
    names: Any, m: int, *, arg: str = "names", unit: str = "member", numbered: bool = False
) -> list[str]:
    """``m`` distinct member names; by default ``g`` for a lone member (unless ``numbered``),
    else ``g1..gm``."""
    if names is None:
        return ["g"] if m == 1 and not numbered else [f"g{i}" for i in range(1, m + 1)]
    if (isinstance(names, (str, bytes)) or not isinstance(names, (Sequence, np.ndarray))
            or (isinstance(names, np.ndarray) and names.ndim != 1)):
        raise ValueError(f"{arg} must be a sequence of {unit} names, got {shown(names)}")
    labels = [str(v) for v in names]
    if len(labels) != m:
        raise ValueError(f"{arg} must list one name per {unit} ({m}), got {len(labels)} names: "
                         f"{shown(names)}")
    if len(set(labels)) != m:
        raise ValueError(f"{arg} must be distinct names, got {shown(labels)}")
    return labels


def allocation(
    deltas: Any, total: float, m: int, *, units: str = "members", scalar: bool = True
) -> NDArray[np.float64]:
    """Per-member error shares ``δ_g`` (default ``total/m``), each in (0, 1), with
    ``Σ_g δ_g ≤ total`` (union bound), fixed before the audit (Assumption 1)."""
    if deltas is None:
        return np.full(m, total / m)
    d, was_scalar = as_family(deltas, "deltas", integer=False, scalar=scalar)
    same_size(m, units, deltas=d)
    bad = np.flatnonzero((d <= 0) | (d >= 1))
    if bad.size:
        i = int(bad[0])
        where = "" if was_scalar else f"deltas[{i}]="
        raise ValueError(f"deltas must lie in (0, 1), got {where}{d[i].item()!r}")
    s = math.fsum(d)
    if s > total * (1 + SUM_RTOL):
        raise ValueError(
            f"deltas sum to {s!r}, more than {total!r}: the union bound needs sum(deltas) <= {total!r}"
        )
    return d


def member_allocation(labels: Sequence[str], alloc: NDArray[np.float64]) -> dict[str, float]:
    """``Certificate.allocation`` of a family certified by a union bound: each member's share
    ``δ_g`` from :func:`allocation`, under the member's name."""
    return {g: float(a) for g, a in zip(labels, alloc, strict=True)}


def check_within(
    small: NDArray[np.int64], big: NDArray[np.int64] | int, small_name: str, big_name: str,
    labels: Sequence[str] | None = None,
) -> None:
    """``small <= big`` entrywise (counts within sizes, sizes within pools); ``big`` may be one
    shared integer. ``labels`` adds the member's name to the message."""
    bad = np.flatnonzero(small > big)
    if bad.size:
        i = int(bad[0])
        limit = f"{big_name}={big}" if np.ndim(big) == 0 else f"{big_name}[{i}]={np.asarray(big)[i]}"
        who = "" if labels is None else f" ({labels[i]})"
        raise ValueError(f"{small_name}[{i}]={small[i]} exceeds {limit}{who}")


def check_corpus_size(corpus_size: Any, largest: int, what: str = "excluded pool") -> int:
    """The corpus size ``N ≥ 1``, at least the largest pool it contains (for ``r ≤ M0/N``)."""
    n = check_count(corpus_size, "corpus_size", 1)
    if n < largest:
        raise ValueError(f"corpus_size={n} is smaller than the largest {what} ({largest})")
    return n


def plain(x: Any, dtype: type | None = None) -> Any:
    """A validated argument as it goes into ``Certificate.inputs``: JSON-ready, shape kept.

    :param dtype: ``int`` or ``float`` to store the values the certificate used (``300.0``
        given for a count is stored as ``300``); ``None`` keeps the caller's numbers.
    """
    if x is None:
        return None
    arr = np.asarray(x) if dtype is None else np.asarray(x).astype(dtype)
    return arr.item() if arr.ndim == 0 else arr.tolist()


def out(values: Any, scalar: bool, kind: type | None = None, where: NDArray[np.bool_] | None = None) -> Any:
    """Per-member values as a certificate reports them: a plain number for a call made with
    scalars, else a tuple over members.

    :param kind: converts each entry (default: the matching Python type of the numpy entry).
    :param where: members outside it (when given) get ``None``.
    """
    items = [
        (v.item() if kind is None else kind(v)) if where is None or where[i] else None
        for i, v in enumerate(np.atleast_1d(values))
    ]
    return items[0] if scalar else tuple(items)
