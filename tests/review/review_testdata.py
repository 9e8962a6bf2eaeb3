"""A toy screening review shared by the tests of rankcut.review: relevant records share a topic."""

from __future__ import annotations

import numpy as np

from rankcut.review.records import Records

_TOPIC = ("migraine", "triptan", "headache", "serotonin", "aura")
_OTHER = ("kidney", "glucose", "transport", "cortex", "insulin", "rat", "membrane", "lithium",
          "calcium", "plasma", "ovary", "steroid", "enzyme", "muscle", "bone", "liver")


def toy_records(n: int = 120, relevant: int = 12, seed: int = 0) -> Records:
    """``n`` records, the first ``relevant`` of a shuffled order about the topic (label 1)."""
    rng = np.random.default_rng(seed)
    labels = np.zeros(n, dtype=np.int8)
    labels[rng.permutation(n)[:relevant]] = 1
    texts = []
    for y in labels:
        words = list(rng.choice(_OTHER, size=8))
        if y:
            words[:3] = rng.choice(_TOPIC, size=3, replace=False)
        texts.append(" ".join(words))
    return Records("toy", tuple(str(i) for i in range(n)), tuple(f"title {i}" for i in range(n)),
                   tuple(texts), labels)


def labels_of(records: Records) -> dict[str, int]:
    """The records' own labels by record id (what a simulation plays as the reviewer)."""
    assert records.labels is not None
    return dict(zip(records.ids, records.labels.tolist(), strict=True))
