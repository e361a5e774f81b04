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

#: A printed number: thousands separators, a decimal part, a trailing ``x`` or ``%``: one search word.
NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?[x%]?|\d+(?:\.\d+)?[x%]?"


def number_word(text: str) -> str:
    """The search word of a printed number: ``"44,960"``, ``"44960"`` -> ``"n44960"``; ``"53.70"``,
    ``"53.7"`` -> ``"n53.7"``; ``"104.3x"`` -> ``"n104.3"``; ``"12%"`` -> ``"n12"``. The ``n`` keeps a
    whole number from being a word of digits only, which Sphinx's page script drops from a query."""
    text = text.rstrip("x%").replace(",", "")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "n" + text


class NumberSearch(SearchEnglish):
    """English search that writes every printed number (:data:`NUMBER`) as one word (:func:`number_word`)."""

    _word_re = re.compile(rf"(?<![\w.,])(?:{NUMBER})(?![\w])|\w+")
    _number_re = re.compile(rf"(?:{NUMBER})")

    def split(self, input: str) -> list[str]:
        return [number_word(w) if self._number_re.fullmatch(w) else w for w in self._word_re.findall(input)]

    js_splitter_code = r"""
function splitQuery(query) {
  const number = /^(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?[x%]?|\d+(?:\.\d+)?[x%]?)$/;
  const words = query.match(/(?<![\w.,])(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?[x%]?|\d+(?:\.\d+)?[x%]?)(?!\w)|[\p{Letter}\p{Number}_\p{Emoji_Presentation}]+/gu) || [];
  return words.map(w => {
    if (!number.test(w)) return w;
    let t = w.replace(/[x%]$/, "").replace(/,/g, "");
    if (t.includes(".")) t = t.replace(/0+$/, "").replace(/\.$/, "");
    return "n" + t;
  });
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
