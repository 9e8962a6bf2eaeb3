"""Screening reviews: records in, a continuous-active-learning ranker, seeded simulation.

Built on the interleaved review of :mod:`rankcut.certify.interleaved`: the ranker is a
:class:`~rankcut.certify.policies.Screener`, so the certificate holds whatever it learns.
Imports :mod:`rankcut.audit` (its folder and workflow), :mod:`rankcut.certify` and
:mod:`rankcut.data`, never the command line. The seeded
simulation is :func:`rankcut.review.simulate.simulate_review` (not re-exported here: it loads scipy,
and every ``rankcut audit`` command imports this package to register the ranker).
"""

from rankcut.review.cal import CALConfig, CALScreener
from rankcut.review.records import Records, load_records, load_trec_records

__all__ = ["CALConfig", "CALScreener", "Records", "load_records", "load_trec_records"]
