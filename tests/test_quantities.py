"""One value per quantity: a number two chapters show under one registered quantity
(:mod:`jalapeno.chapters.quantities`) has one value in every stored notebook, within the printed rounding
of each, unless one names a variant whose reason the registry gives."""

import nbformat
import pytest

from jalapeno.chapters import Chapter, quantities
from jalapeno.errors import UnknownNameError
from jalapeno.publish import pages, scenarios


def _shown() -> list[tuple[str, str, str, str | None, str]]:
    out = []
    for name in scenarios.notebook_names():
        nb = nbformat.read(scenarios.notebook_path(name), as_version=4)
        numbers = pages.glued(nb)
        out += [(name, key, q, v, numbers[key]) for key, (q, v) in pages.quantities(nb).items()]
    return out


def test_every_stored_notebook_shows_one_value_per_quantity():
    shown = _shown()
    assert shown, "no stored notebook names a quantity"
    assert pages.quantity_conflicts(shown) == []


def test_the_quantities_the_audit_found_contradicted_are_named_where_they_are_shown():
    """GB200's peak tok/s/kW (44,960) and the per-watt ratio it gives (1.90) are shown by several chapters,
    each naming the quantity."""
    by_quantity = {}
    for chapter, key, q, v, text in _shown():
        by_quantity.setdefault(q, set()).add(chapter)
    assert {"reading-the-numbers", "caveats"} <= by_quantity["gb200-gptoss-peak-tok-s-kw"]
    assert {"reading-the-numbers", "pareto"} <= by_quantity["gptoss-per-watt-ratio-rated"]


def test_conflicting_values_are_found_and_variants_kept_apart():
    shown = [("a", "k", "q", None, "44,960"), ("b", "k", "q", None, "45,066"), ("c", "k", "q", "best run", "45,066"),
             ("a", "r", "r", None, "1.90"), ("b", "r", "r", None, "1.901"), ("a", "t", "t", None, "GB200"),
             ("b", "t", "t", None, "GB300")]
    found = pages.quantity_conflicts(shown)
    assert len(found) == 2
    assert "a/k = 44,960; b/k = 45,066" in found[0] and "'t'" in found[1]


@pytest.mark.parametrize("text, interval", [("1.90", (1.895, 1.905)), ("44,960", (44_959.5, 44_960.5)),
                                            ("\u22120.3", (-0.35, -0.25)), ("7", (6.5, 7.5))])
def test_printed_interval(text, interval):
    assert pages.printed_interval(text) == pytest.approx(interval)


def test_a_text_that_is_not_one_number_has_no_interval():
    assert pages.printed_interval("1.5–1.9") is None and pages.printed_interval("GB200") is None


def test_a_quote_names_a_registered_quantity_and_variant():
    ch = Chapter()
    ch.quote("x", 1.9, "{:.2f}", quantity="gptoss-per-watt-ratio-rated")
    assert ch.quantities == {"x": ("gptoss-per-watt-ratio-rated", None)}
    with pytest.raises(UnknownNameError, match="no-such-quantity"):
        ch.quote("y", 1.0, quantity="no-such-quantity")
    with pytest.raises(UnknownNameError, match="no-such-variant"):
        ch.quote("y", 1.0, quantity="gptoss-per-watt-ratio-rated", variant="no-such-variant")
    with pytest.raises(ValueError, match="needs its quantity"):
        ch.quote("y", 1.0, variant="best run")


def test_every_variant_gives_its_reason():
    for name, q in quantities.QUANTITIES.items():
        assert q.what, name
        assert all(reason.strip() for reason in q.variants.values()), name
