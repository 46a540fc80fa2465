"""Vendored third-party code: its tests are run by ../test_corpus_numpy_financial.py
(under plain pytest and under `--ppy-packages`), never collected with ppy-numpy's."""

collect_ignore_glob = ["*"]
