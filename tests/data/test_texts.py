"""JSON-lines document texts."""

import io

import pytest

from rankcut.data.texts import read_query_texts, read_texts_and_queries, read_texts_jsonl, read_titles


def text(s: str, name: str = "texts.jsonl") -> io.StringIO:
    f = io.StringIO(s)
    f.name = name
    return f


LINES = (
    '{"query_id": "1", "query": "q one", "doc_id": "a", "text": "alpha beta"}\n'
    '{"query_id": 2, "query": "q two", "doc_id": "a", "text": "alpha beta"}\n'
    "\n"
    '{"query_id": "2", "query": "q two", "doc_id": 7, "text": ""}\n'
)


def test_by_pair_and_by_doc():
    assert read_texts_jsonl(text(LINES)) == {("1", "a"): "alpha beta", ("2", "a"): "alpha beta",
                                            ("2", "7"): ""}
    assert read_texts_jsonl(text(LINES), by="doc") == {"a": "alpha beta", "7": ""}
    with pytest.raises(ValueError, match="by must be one of"):
        read_texts_jsonl(text(LINES), by="query")


@pytest.mark.parametrize(
    ("line", "message"),
    [("{not json", r"not valid JSON"), ('["a"]', r"expected a JSON object, got list"),
     ('{"query_id": "1", "doc_id": "b"}', r"no 'text' field \(its fields: 'query_id', 'doc_id'\)"),
     ('{"docno": "b", "contents": "x"}', r"no 'doc_id' field \(its fields: 'docno', 'contents'\)"),
     ('{"query_id": "1", "doc_id": "b", "text": 3}', r"'text' must be a string, got 3"),
     ('{"query_id": "1", "text": "x"}', r"no 'doc_id' field \(its fields: 'query_id', 'text'\)"),
     ('{"query_id": "1", "doc_id": null, "text": "x"}', r"'doc_id' must be a non-empty string or integer, "
      "got None"),
     ('{"query_id": "", "doc_id": "b", "text": "x"}', r"'query_id' must be a non-empty string"),
     ('{"query_id": true, "doc_id": "b", "text": "x"}', r"'query_id' must be a non-empty string"),
     ('{"query_id": "1", "doc_id": "a", "text": "x"}',
      r"query '1', document 'a' is given twice \(lines 1 and 2\)")],
)
def test_bad_line_names_file_and_line(line, message):
    first = '{"query_id": "1", "doc_id": "a", "text": "x"}\n'
    with pytest.raises(ValueError, match=rf"texts.jsonl, line 2: {message}"):
        read_texts_jsonl(text(first + line + "\n"))


def test_by_doc_conflicting_texts():
    lines = ('{"query_id": "1", "doc_id": "a", "text": "x"}\n'
             '{"query_id": "2", "doc_id": "a", "text": "y"}\n')
    with pytest.raises(ValueError, match=r"line 2: document 'a' has a different text than on line 1"):
        read_texts_jsonl(text(lines), by="doc")


def test_one_pass_gives_both_readers_answers_and_their_errors():
    """read_texts_and_queries, read once where a list to label shows both, is the two readers in
    one: the same dicts, and a bad query or text line refused as each reader refuses it."""
    texts, queries = read_texts_and_queries(text(LINES))
    assert texts == read_texts_jsonl(text(LINES)) and queries == read_query_texts(text(LINES))
    assert queries == {"1": "q one", "2": "q two"}
    assert read_texts_and_queries(text(LINES), by="doc")[0] == {"a": "alpha beta", "7": ""}
    differs = LINES + '{"query_id": "1", "query": "other", "doc_id": "b", "text": "x"}\n'
    with pytest.raises(ValueError, match=r"line 5: query '1' has a different text than on line 1"):
        read_texts_and_queries(text(differs))
    with pytest.raises(ValueError, match=r"line 1: no 'text' field"):
        read_texts_and_queries(text('{"query_id": "1", "query": "q", "doc_id": "a"}\n'))


def test_titles_are_read_where_lines_give_one():
    """Titles (the page's heading of a text) are read where lines give a string not blank: the start
    of the text (rankcut review's records) or apart from it (a corpus's title and body); a corpus's
    null or empty title is no title, and a titled line without an id is refused with its line."""
    lines = ('{"query_id": "r", "doc_id": "a", "text": "Heart\\nA trial.", "title": "Heart"}\n'
             '{"query_id": "r", "doc_id": "b", "text": "No title."}\n'
             '{"query_id": "r", "doc_id": "c", "text": "The body.", "title": "Apart"}\n'
             '{"query_id": "r", "doc_id": "d", "text": "x", "title": null}\n'
             '{"query_id": "r", "doc_id": "e", "text": "x", "title": " "}\n')
    assert read_titles(text(lines)) == {("r", "a"): "Heart", ("r", "c"): "Apart"}
    assert read_titles(text(lines), by="doc") == {"a": "Heart", "c": "Apart"}
    with pytest.raises(ValueError, match=r"line 6: no 'doc_id' field"):
        read_titles(text(lines + '{"query_id": "r", "text": "x", "title": "T"}\n'))


def test_trec_dl_texts_cover_the_bm25_run(datasets):
    from rankcut.data.trec import read_run

    for year, lines in (("dl19", 4300), ("dl20", 5400)):
        texts = read_texts_jsonl(datasets / "trec-dl" / "texts" / f"bm25.{year}.jsonl")
        assert len(texts) == lines
        run = read_run(datasets / "trec-dl" / "runs" / f"bm25.{year}.run")
        assert set(texts) == {(q, p.doc_id) for q, ps in run.items() for p in ps}
        assert all(isinstance(t, str) and t for t in texts.values())
