"""A Sphinx extension of the book: its search finds numbers as the seeds print them (``53.7``, ``104.3``,
``44,960``).

Sphinx's English search splits text and queries on every character that is not a letter, digit or
underscore, and its page script drops a query term made of digits only, so ``53.7`` becomes ``53`` and
``7`` and then nothing. This language keeps a number with a decimal point or thousands separators as one
word, both in the index (``_word_re``) and in the reader's query (``js_splitter_code``, which Sphinx puts
in ``language_data.js`` as ``splitQuery``). Enabled in ``book/_config.yml`` (``sphinx.config.extensions``).

It also makes the search index whole on every render (:func:`_whole_index`): Sphinx's incremental HTML
build loads the previous ``searchindex.js`` and keeps every term it held, even with no page left that has
it; here every page is written (from the stored doctrees: reading, the slow part, stays incremental) and
the index is built from them alone, so equal pages give an equal index.
"""

from __future__ import annotations

import re

from sphinx.search import languages
from sphinx.search.en import SearchEnglish

#: A number with a decimal point or thousands separators: one search word.
NUMBER = r"\d+(?:[.,]\d+)+"


class NumberSearch(SearchEnglish):
    """English search that keeps printed numbers (:data:`NUMBER`) whole."""

    _word_re = re.compile(rf"{NUMBER}|\w+")
    js_splitter_code = r"""
function splitQuery(query) {
  return query.match(/\d+(?:[.,]\d+)+|[\p{Letter}\p{Number}_\p{Emoji_Presentation}]+/gu) || [];
}
"""


def _whole_index(app) -> None:
    """On ``builder-inited``: an HTML builder writes every page and starts its search index empty."""
    builder = app.builder
    if getattr(builder, "search", False) and hasattr(builder, "load_indexer"):
        builder.get_outdated_docs = lambda: iter(sorted(builder.env.found_docs))
        builder.load_indexer = lambda docnames: None


def setup(app) -> dict[str, object]:
    languages["en"] = NumberSearch
    app.connect("builder-inited", _whole_index)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
