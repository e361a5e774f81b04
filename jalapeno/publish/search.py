"""A Sphinx extension of the book: its search finds numbers as the seeds print them (``53.7``, ``104.3``,
``44,960``).

Sphinx's English search splits text and queries on every character that is not a letter, digit or
underscore, and its page script drops a query term made of digits only, so ``53.7`` becomes ``53`` and
``7`` and then nothing. This language keeps a number with a decimal point or thousands separators as one
word, both in the index (``_word_re``) and in the reader's query (``js_splitter_code``, which Sphinx puts
in ``language_data.js`` as ``splitQuery``). Enabled in ``book/_config.yml`` (``sphinx.config.extensions``).

It also keeps the search index exact under incremental renders (:func:`_exact_index`): Sphinx's
incremental HTML build loads the previous ``searchindex.js``, takes the rewritten pages out of it and
feeds them again, but keeps every term it held with no page left that has it (an empty list in the
index). Here those terms are dropped, so an incremental render's index is the one a full render of the
same pages writes, byte for byte, while only the pages whose sources changed are written (every page
when a page's title changed, since each page's navigation shows every title). The previous
index is not trusted where Sphinx cannot restore it (it does not reload index entries or objects, of
which the book has none): then every page is written and the index is built from them alone.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

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


def _restorable(path: Path) -> bool:
    """Whether the search index at ``path`` holds only what Sphinx's ``IndexBuilder.load`` restores:
    no index entries and no objects (it reloads neither). False for no file or one it cannot read."""
    try:
        text = path.read_text(encoding="utf-8")
        frozen = json.loads(text[text.index("(") + 1:text.rindex(")")])
    except (OSError, ValueError):
        return False
    return isinstance(frozen, dict) and not frozen.get("indexentries") and not frozen.get("objects")


def _exact_index(app) -> None:
    """On ``builder-inited``, for an HTML builder with a search index: after Sphinx prunes the pages to be
    rewritten from the previous index, drop the terms no page has left; where the previous index holds
    what Sphinx does not restore (:func:`_restorable`), write every page and start the index empty."""
    builder = app.builder
    if not (getattr(builder, "search", False) and hasattr(builder, "load_indexer")):
        return
    if not _restorable(Path(builder.outdir) / builder.searchindex_filename):
        builder.get_outdated_docs = lambda: iter(sorted(builder.env.found_docs))
        builder.load_indexer = lambda docnames: None
        return
    load = builder.load_indexer

    def load_indexer(docnames) -> None:
        load(docnames)  # the previous index without the pages about to be written
        for mapping in (builder.indexer._mapping, builder.indexer._title_mapping):
            for term in [t for t, pages in mapping.items() if not pages]:
                del mapping[term]

    builder.load_indexer = load_indexer


def _titles_before(app, env, docnames) -> None:
    """On ``env-before-read-docs``: the titles of the pages about to be read, as they were."""
    app.jalapeno_titles_before = {d: env.titles[d].astext() for d in docnames if d in env.titles}


def _pages_showing_titles(app, env) -> list[str]:
    """On ``env-get-updated``: every page when a page read anew has another title, since each page's
    navigation shows every title (Sphinx would rewrite only the pages read); else none more."""
    before = getattr(app, "jalapeno_titles_before", {})
    if any(d in env.titles and env.titles[d].astext() != title for d, title in before.items()):
        return sorted(env.found_docs)
    return []


def setup(app) -> dict[str, object]:
    languages["en"] = NumberSearch
    app.connect("builder-inited", _exact_index)
    app.connect("env-before-read-docs", _titles_before)
    app.connect("env-get-updated", _pages_showing_titles)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
