"""A Sphinx extension of the book: its search finds numbers as the seeds print them (``53.7``, ``104.3``,
``44,960``).

Sphinx's English search splits text and queries on every character that is not a letter, digit or
underscore, and its page script drops a query term made of digits only, so ``53.7`` becomes ``53`` and
``7`` and then nothing. This language keeps a number with a decimal point or thousands separators as one
word, both in the index (``_word_re``) and in the reader's query (``js_splitter_code``, which Sphinx puts
in ``language_data.js`` as ``splitQuery``). Enabled in ``book/_config.yml`` (``sphinx.config.extensions``).
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


def setup(app) -> dict[str, object]:
    languages["en"] = NumberSearch
    return {"parallel_read_safe": True, "parallel_write_safe": True}
