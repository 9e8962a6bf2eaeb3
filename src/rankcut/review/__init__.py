"""Screening reviews: records in, a continuous-active-learning ranker, seeded simulation.

Built on the interleaved review of :mod:`rankcut.certify.interleaved`: the ranker is a
:class:`~rankcut.certify.policies.Screener`, so the certificate holds whatever it learns.
Imports :mod:`rankcut.certify` and :mod:`rankcut.data`, never the command line.
"""

from rankcut.review.cal import CALConfig, CALScreener
from rankcut.review.records import Records, load_records, load_trec_records
from rankcut.review.simulate import Simulation, simulate_review

__all__ = ["CALConfig", "CALScreener", "Records", "Simulation", "load_records", "load_trec_records",
           "simulate_review"]
