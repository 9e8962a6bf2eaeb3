"""The one contract every cutter follows, and the registry that names them.

A *cutter* decides, per query, how many documents of a ranked list to keep. It follows the
scikit-learn estimator contract (``sklearn/base.py``; STYLE.md item 6):

* ``__init__`` only stores its keyword arguments (no validation, no work), so that
  ``type(c)(**c.get_params())`` rebuilds an unfitted copy (:func:`clone`);
* ``fit(lists)`` learns from training lists and returns ``self``; what it learns is stored in
  attributes whose names end in ``_``;
* ``predict(lists)`` returns one cut per query: an ``int64`` array of shape ``[n_queries]``,
  ``k`` = number of documents kept, ``1 ≤ k ≤ length`` (``0 ≤ k`` when the cutter is configured
  with ``allow_zero=True``);
* calling ``predict`` before ``fit`` on a cutter that needs fitting raises :class:`NotFittedError`.

Cutters are registered by name (STYLE.md item 3) and built from a spec string ``NAME[:PARAM]``,
e.g. ``"fixed-k:20"`` or ``"greedy-k:f1"`` (or with the keyword, ``"fixed-k:k=20"``, as
:func:`spec_forms` shows them); the same keys serve Python, configs and the CLI.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any, ClassVar, Self, TypeVar

import numpy as np
from numpy.typing import NDArray

from rankcut._words import id_list
from rankcut.data.lists import RankedLists

__all__ = [
    "Cutter",
    "NotFittedError",
    "available_cutters",
    "clone",
    "cutter_class",
    "make_cutter",
    "register",
    "spec_forms",
]

C = TypeVar("C", bound="type[Cutter]")

_REGISTRY: dict[str, type[Cutter]] = {}


class NotFittedError(ValueError, AttributeError):
    """``predict`` was called before ``fit`` on a cutter that learns from training lists.

    Subclasses both ValueError and AttributeError, as scikit-learn's ``NotFittedError`` does.
    """


class Cutter:
    """Base class of all cutters (see the module docstring for the contract).

    Subclasses implement :meth:`_predict` (and :meth:`_fit` when they learn something), declare
    the spec parameter they accept in ``spec_param`` (``(keyword, converter)`` or None), and
    validate their keyword arguments in :meth:`_validate_params`.
    """

    #: registry key, set by :func:`register`
    name: ClassVar[str] = ""
    #: the constructor keyword that the PARAM of a ``NAME:PARAM`` spec fills, and how to parse it
    spec_param: ClassVar[tuple[str, Callable[[str], Any]] | None] = None
    #: keyword arguments that ``__init__`` takes through ``**options`` (those a family of cutters
    #: shares), parameters after its own
    shared_params: ClassVar[tuple[str, ...]] = ()
    #: the cut is read from the scores alone: a list that scores every document alike is warned of
    reads_scores: ClassVar[bool] = False

    # ----------------------------------------------------------------- parameters
    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        names = []
        for p in sig.parameters.values():
            if p.name == "self" or (p.kind is p.VAR_KEYWORD and cls.shared_params):
                continue
            if p.kind is not p.KEYWORD_ONLY:
                raise TypeError(f"{cls.__name__}.__init__ must take keyword-only arguments, not {p.name!r}")
            names.append(p.name)
        return [*names, *cls.shared_params]

    def get_params(self) -> dict[str, Any]:
        """The constructor's keyword arguments as stored (scikit-learn's ``get_params``)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def _validate_params(self) -> None:
        """Raise ValueError naming the argument when a stored keyword argument is invalid."""

    def requires_fit(self) -> bool:
        """Whether :meth:`predict` needs a prior :meth:`fit` (True for learned cutters)."""
        return False

    def allows_zero(self) -> bool:
        """Whether this cutter may return ``k = 0`` (keep nothing)."""
        return bool(getattr(self, "allow_zero", False))

    def is_fitted(self) -> bool:
        """True once :meth:`fit` has stored its learned attributes (names ending in ``_``)."""
        return any(k.endswith("_") and not k.startswith("_") for k in vars(self))

    # ----------------------------------------------------------------- fit / predict
    def fit(self, lists: RankedLists) -> Self:
        """Learn from training lists; return ``self``.

        :param lists: training ranked lists (with qrels for supervised cutters).
        """
        _check_lists(lists, "lists")
        self._validate_params()
        self._fit(lists)
        return self

    def _fit(self, lists: RankedLists) -> None:
        """Learn from ``lists``; store learned attributes with a trailing ``_``."""

    def predict(self, lists: RankedLists) -> NDArray[np.int64]:
        """One cut per query of ``lists``.

        :param lists: ranked lists of ``n_queries`` queries.
        :return: ``int64`` array of shape ``[n_queries]``: the number of documents kept.
        """
        _check_lists(lists, "lists")
        self._validate_params()
        if self.requires_fit() and not self.is_fitted():
            raise NotFittedError(
                f"this {self.name or type(self).__name__} cutter is not fitted yet: call fit(lists) "
                "on training lists before predict"
            )
        if self.reads_scores:
            _warn_flat(lists, self.name or type(self).__name__)
        if (min_docs := getattr(self, "min_docs", None)) is not None:   # lists it fits no model to
            _warn_short(lists, min_docs, self.name or type(self).__name__)
        cuts = np.asarray(self._predict(lists))
        # enforce the contract on every cutter's output, not only on the ones tested
        return lists.check_cuts(cuts, allow_zero=self.allows_zero())

    def _predict(self, lists: RankedLists) -> NDArray[np.int64]:
        raise NotImplementedError

    def fit_predict(self, lists: RankedLists) -> NDArray[np.int64]:
        """``fit(lists).predict(lists)``."""
        return self.fit(lists).predict(lists)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


def _warn_flat(lists: RankedLists, name: str) -> None:
    """Warn of the lists of two or more documents that all score alike: a cutter that reads the
    scores alone cannot tell their documents apart, and its cut there says nothing."""
    scores = np.where(lists.mask, lists.scores, np.nan)
    with np.errstate(invalid="ignore"):
        spread = np.nanmax(scores, axis=1, initial=-np.inf) - np.nanmin(scores, axis=1, initial=np.inf)
    flat = np.flatnonzero((lists.lengths >= 2) & (spread == 0))
    if flat.size:
        shown = id_list((lists.qids[i] for i in flat), 3)
        warnings.warn(f"{flat.size} of the {len(lists)} lists score every document alike (query {shown}): "
                      f"{name} reads the scores alone and cannot tell their documents apart there",
                      UserWarning, stacklevel=3)


def _warn_short(lists: RankedLists, min_docs: int, name: str) -> None:
    """Warn of the lists shorter than ``min_docs``, which a cutter that fits each list's scores
    does not fit and keeps whole: on MQ2008 half the lists, so that Surprise at threshold ``inf``
    (one document a list where it fits) kept 4.4 on average, without a word."""
    short = np.flatnonzero((lists.lengths >= 1) & (lists.lengths < min_docs))
    if short.size:
        shown = id_list((lists.qids[i] for i in short), 3)
        warnings.warn(f"{short.size} of the {len(lists)} lists {'has' if short.size == 1 else 'have'} fewer "
                      f"than min_docs={min_docs} documents (query {shown}): {name} does not fit them and "
                      "keeps them whole (its min_docs parameter)", UserWarning, stacklevel=3)


def _check_lists(lists: Any, arg: str) -> None:
    if not isinstance(lists, RankedLists):
        raise ValueError(f"{arg} must be a RankedLists, got {type(lists).__name__}")


def clone(cutter: Cutter) -> Cutter:
    """An unfitted copy with the same parameters (scikit-learn's ``clone``)."""
    return type(cutter)(**cutter.get_params())


# --------------------------------------------------------------------- registry
def register(name: str) -> Callable[[C], C]:
    """Class decorator: register a :class:`Cutter` subclass under ``name``.

    ``name`` must be non-empty and must not contain ``:`` (the spec separator).
    """
    if not name or ":" in name or name != name.strip():
        raise ValueError(f"invalid cutter name {name!r}: non-empty, no ':' and no surrounding spaces")

    def deco(cls: C) -> C:
        if not (isinstance(cls, type) and issubclass(cls, Cutter)):
            raise TypeError(f"@register({name!r}) must decorate a Cutter subclass, got {cls!r}")
        if name in _REGISTRY and _REGISTRY[name] is not cls:
            raise ValueError(f"cutter {name!r} registered twice")
        cls._param_names()  # fail at import time, not at first use, on a bad __init__
        cls.name = name
        _REGISTRY[name] = cls
        return cls

    return deco


def available_cutters() -> tuple[str, ...]:
    """Registered cutter names, sorted."""
    return tuple(sorted(_REGISTRY))


def spec_forms() -> tuple[str, ...]:
    """The spec form of every registered cutter, sorted by name: ``NAME[:PARAM=DEFAULT]`` with PARAM
    the keyword its ``spec_param`` fills and DEFAULT what the bare name takes (``=DEFAULT`` left out
    where it is learned or None), or ``NAME`` for a cutter that takes no parameter, e.g.
    ``("distribution", "fixed-k[:k=10]", "greedy-k[:metric=f1]", ...)`` — what ``--cutters``
    accepts (a bare ``fixed-k`` keeping 10 was said nowhere)."""
    forms = []
    for name in available_cutters():
        cls = _REGISTRY[name]
        if cls.spec_param is None:
            forms.append(name)
            continue
        key = cls.spec_param[0]
        given = inspect.signature(cls.__init__).parameters.get(key)   # (taken by **kwargs: not shown)
        default = None if given is None else given.default
        shown = "" if default is None or default is inspect.Parameter.empty else f"={default}"
        forms.append(f"{name}[:{key}{shown}]")
    return tuple(forms)


def cutter_class(name: str) -> type[Cutter]:
    """The class registered under ``name`` (ValueError listing the known names otherwise)."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(
            f"unknown cutter {name!r}; known cutters: {', '.join(available_cutters())}"
        ) from None


def make_cutter(spec: str, **kwargs: Any) -> Cutter:
    """Build a cutter from a spec ``NAME[:PARAM]`` and further keyword arguments.

    ``PARAM`` fills the cutter's ``spec_param`` keyword (``fixed-k:20`` → ``k=20``,
    ``greedy-k:dcg`` → ``metric="dcg"``), given bare or with its keyword (``fixed-k:k=20``, the form
    :func:`spec_forms` and ``--help`` show); ``kwargs`` give the others
    (``make_cutter("greedy-k:f1", recall_base="judged")``). The parameters are validated at once,
    so a bad spec fails here with a ValueError naming the spec.
    """
    if not isinstance(spec, str):
        raise ValueError(f"cutter spec must be a string 'NAME[:PARAM]', got {type(spec).__name__}")
    name, sep, param = spec.strip().partition(":")
    cls = cutter_class(name.strip())
    if sep:
        if cls.spec_param is None:
            raise ValueError(f"cutter {cls.name!r} takes no parameter in its spec, got {spec!r}")
        key, convert = cls.spec_param
        if key in kwargs:
            raise ValueError(f"cutter spec {spec!r} and keyword {key}= both set {key!r}")
        named, eq, value = param.partition("=")
        if eq and named.strip() != key:
            raise ValueError(f"cutter {cls.name!r} takes {key} in its spec ({cls.name}:VALUE or "
                             f"{cls.name}:{key}=VALUE), got {named.strip()!r} in {spec!r}")
        param = (value if eq else param).strip()
        try:
            kwargs[key] = convert(param)
        except ValueError as exc:
            kind = {int: "an integer", float: "a number"}.get(convert)   # type: ignore[call-overload]
            why = f"{key} must be {kind}, got {param!r}" if kind else f"{key}: {exc}"
            raise ValueError(f"bad parameter {param!r} in cutter spec {spec!r}: {why}") from None
    try:
        cutter = cls(**kwargs)
    except TypeError:
        raise ValueError(
            f"cutter {cls.name!r} accepts keywords {cls._param_names()}, got {sorted(kwargs)}"
        ) from None
    try:
        cutter._validate_params()
    except ValueError as exc:
        raise ValueError(f"cutter spec {spec!r}: {exc}") from None
    return cutter


# --------------------------------------------------------------------- shared validators
def check_float(value: Any, arg: str, *, allow_inf: bool = False) -> float:
    """``value`` as a float — finite, or not NaN with ``allow_inf`` — else ValueError naming ``arg``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{arg} must be a number, got {value!r}")
    v = float(value)
    if np.isnan(v) or (np.isinf(v) and not allow_inf):
        raise ValueError(f"{arg} must be {'a number, not NaN' if allow_inf else 'finite'}, got {value!r}")
    return v


def check_score_arrays(scores: Any, mask: Any) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """``[n_queries, max_len]`` scores and mask as arrays, checked: same 2-D shape, finite listed
    scores, each list sorted descending (as :class:`RankedLists` keeps them), listed documents first.
    """
    scores = np.asarray(scores, dtype=float)
    mask = np.asarray(mask, dtype=bool)
    if scores.ndim != 2 or scores.shape != mask.shape:
        raise ValueError(f"scores {scores.shape} and mask {mask.shape} must be the same 2-D shape")
    if np.any(mask[:, 1:] & ~mask[:, :-1]):
        raise ValueError("mask must list each query's documents first, then padding")
    if np.any(~np.isfinite(scores[mask])):
        raise ValueError("scores must be finite at every listed document")
    if np.any((np.diff(np.where(mask, scores, 0.0), axis=1) > 0) & mask[:, 1:]):  # prefix mask: both listed
        raise ValueError("scores must be sorted descending within each list")
    return scores, mask


