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


#: The quantities two or more chapters showed with values or readings that did not agree, each with the
#: chapters that show it now and the variants they show it under (None: the plain value).
CONTRADICTED = {
    "gb200-gptoss-peak-tok-s-kw": ({"reading-the-numbers", "caveats"}, {None}),
    "gptoss-per-watt-ratio-rated": ({"reading-the-numbers", "pareto", "caveats"},
                                    {None, "best GB200 run", "modeled Jalapeño"}),
    "gptoss-per-watt-ratio-jalapeno-sustained": ({"reading-the-numbers", "caveats"}, {None}),
    "gptoss-per-watt-ratio-allin-proportional": ({"reading-the-numbers", "caveats"}, {None}),
    "gb200-gptoss-min-tpot-ms": ({"reading-the-numbers", "roofline"}, {None, "best GB200 run", "modeled"}),
    "gb200-gptoss-single-user-tok-s": ({"reading-the-numbers", "roofline"}, {None, "best GB200 run"}),
    "gptoss-tbt-ratio-published": ({"reading-the-numbers", "agents"}, {None}),
    "gptoss-e2e-ratio-published": ({"reading-the-numbers", "agents"}, {None}),
    "jalapeno-gptoss-single-user-tok-s": ({"reading-the-numbers", "roofline", "systems"}, {None, "modeled"}),
    "gptoss-implied-ttft-s": ({"reading-the-numbers", "pareto", "agents"}, {None}),
    "gb200-gptoss-implied-ttft-s": ({"reading-the-numbers", "pareto", "agents"}, {None}),
    "lpx-dsv3-lpus-weights-only": ({"roofline", "systems"}, {None}),
    "lpx-dsv3-racks-weights-only": ({"roofline", "systems"}, {None}),
    "jalapeno-dsr1-single-user-chips": ({"roofline", "systems", "pareto"},
                                        {None, "speed of light", "fewest in the fitted model"}),
    "dsr1-comparison-single-user-tok-s": ({"roofline", "pareto"}, {None}),
    "scheme-c-heldout-median-pct": ({"pareto", "serving-model"}, {None}),
    "scheme-c-heldout-p90-pct": ({"pareto", "serving-model"}, {None}),
    "scheme-c-band-factor": ({"pareto", "serving-model"}, {None}),
    "scheme-c-band-coverage-pct": ({"pareto", "serving-model"}, {None}),
    "gptoss-matched-ratio-central": ({"pareto", "caveats"}, {None, "Monte Carlo"}),
}


def test_every_contradicted_quantity_is_named_in_every_chapter_that_shows_it():
    """Each quantity the chapters contradicted each other on is registered and named, in every chapter that
    shows it, under the variants that chapter's prose says it shows."""
    chapters, variants = {}, {}
    for chapter, key, q, v, text in _shown():
        chapters.setdefault(q, set()).add(chapter)
        variants.setdefault(q, set()).add(v)
    for q, (where, which) in CONTRADICTED.items():
        assert q in quantities.QUANTITIES, q
        assert where <= chapters.get(q, set()), (q, sorted(where - chapters.get(q, set())))
        assert variants[q] == which, (q, variants[q])


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
