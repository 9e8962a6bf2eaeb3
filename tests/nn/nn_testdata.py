"""Helpers for the rankcut.nn tests (imported by them after their ``pytest.importorskip("torch")``):
masks and padding of small batches."""

from __future__ import annotations

import math

import torch
from torch import Tensor


def prefix_mask(lengths: list[int], width: int) -> Tensor:
    """[len(lengths), width]: True on the first ``lengths[i]`` positions of row i."""
    return torch.arange(width)[None, :] < torch.tensor(lengths)[:, None]


def pad(x: Tensor, width: int) -> Tensor:
    """[L, F] -> [width, F], padded with NaN and large values, which would show if they leaked."""
    padding = torch.full((width - x.shape[0], x.shape[1]), 50.0)
    padding[::2] = math.nan
    return torch.cat([x, padding])
