"""The quantities two or more chapters show, each with the one value it has: a number a chapter quotes
names the quantity it shows (``ch.quote(key, value, fmt, quantity="gb200-gptoss-peak-tok-s-kw")``), and
the book's test (``tests/test_quantities.py``) fails when two stored notebooks show values of one quantity
that their printed rounding cannot reconcile. A quantity computed another way on purpose (the best of
GB200's runs rather than the published run, a modeled chip rather than the measured one) is a *variant*
of it, named here with the reason, and the prose says which one it shows where both appear."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import UnknownNameError


@dataclass(frozen=True)
class Quantity:
    """One quantity: what it is (with its display unit) and its named variants, each with the reason it
    differs from the quantity's plain value."""

    what: str
    variants: dict[str, str] = field(default_factory=dict)


#: The name of the glued record of a notebook's quantities (:func:`jalapeno.publish.notebook.glue_all`
#: writes it, :func:`jalapeno.publish.pages.quantities` reads it).
RECORD = "jalapeno-quantities"

#: Every quantity a quote may name, by name.
QUANTITIES: dict[str, Quantity] = {
    "gb200-gptoss-peak-tok-s-kw": Quantity(
        "GB200's peak throughput per kW of rated TDP on gpt-oss-120b 8k/1k (tok/s/kW), in the InferenceMAX run "
        "the seeds' 44,960 comes from (jalapeno.comparison.baseline_summary)"),
    "gptoss-per-watt-ratio-rated": Quantity(
        "Jalapeño's published peak tok/s/kW on gpt-oss-120b over GB200's, both at rated TDP (x)"),
}


def quantity(name: str, variant: str | None = None) -> Quantity:
    """The quantity ``name`` (UnknownNameError listing the known ones) after checking that ``variant``
    (None: the plain value) is one it names (UnknownNameError listing them)."""
    if name not in QUANTITIES:
        raise UnknownNameError("quantity", name, list(QUANTITIES))
    q = QUANTITIES[name]
    if variant is not None and variant not in q.variants:
        raise UnknownNameError(f"variant of quantity {name!r}", variant, list(q.variants))
    return q
