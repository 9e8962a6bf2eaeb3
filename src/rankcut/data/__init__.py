"""Ranked lists in and out: TREC runs and qrels, LETOR files, DataFrames, features."""
