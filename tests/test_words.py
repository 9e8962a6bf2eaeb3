"""The wording helpers every message shares (:mod:`rankcut._words`)."""

from rankcut._words import count, id_list


def test_count_takes_the_grammatical_number():
    assert (count(1, "query", "queries"), count(0, "query", "queries"),
            count(2, "query", "queries")) == ("1 query", "0 queries", "2 queries")


def test_id_list_shows_all_of_a_short_list_and_counts_a_long_one():
    assert id_list([]) == ""
    assert id_list(["a", "b"]) == "'a', 'b'"
    assert id_list(f"q{i}" for i in range(5)) == "'q0', 'q1', 'q2', 'q3', 'q4'"   # a generator, at the limit
    assert id_list(f"q{i}" for i in range(6)) == "'q0', 'q1', 'q2', 'q3', 'q4', ... (6 in all)"
    assert id_list(range(1, 13), 3, quote=False) == "1, 2, 3, ... (12 in all)"   # line numbers
