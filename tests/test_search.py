"""The book's search words for printed numbers (jalapeno.publish.search), worked by hand."""

from jalapeno.publish import search


def test_a_number_is_one_word_with_or_without_separators_zeros_and_suffix():
    assert search.number_word("44,960") == search.number_word("44960") == "n44960"
    assert search.number_word("53.70") == search.number_word("53.7") == "n53.7"
    assert search.number_word("104.3x") == search.number_word("104.3") == "n104.3"
    assert search.number_word("12%") == "n12"
    assert search.number_word("1.0") == "n1"


def test_the_index_splits_text_into_those_words():
    lang = search.NumberSearch({})
    assert lang.split("53.70 and 44,960 at 104.3x, 12% of 2026") == [
        "n53.7", "and", "n44960", "at", "n104.3", "n12", "of", "n2026"]
