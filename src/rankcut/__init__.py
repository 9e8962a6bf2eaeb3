"""rankcut: learn where to cut a ranked list, per query, and certify what the cut leaves behind.

The public surface is kept small; most users never import deeper than ``rankcut``.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
