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
        "Jalapeño's published peak tok/s/kW on gpt-oss-120b over GB200's, both at rated TDP (x)",
        {"best GB200 run": "GB200's side is its best point over every stack and run InferenceMAX measured, not the "
                           "run the published figure comes from (the run-to-run spread is a fraction of a per cent)",
         "modeled Jalapeño": "Jalapeño's side is its modeled peak (the fit reproduces the published one to its "
                             "fit tolerance) and GB200's its best measured point"}),
    "gptoss-per-watt-ratio-allin-proportional": Quantity(
        "the same ratio with both chips' power taken all-in, host and network in proportion to the TDP "
        "(jalapeno.power basis all-in-proportional; equal to the rated ratio by construction) (x)"),
    "gptoss-per-watt-ratio-jalapeno-sustained": Quantity(
        "the same ratio with Jalapeño at its measured sustained draw and GB200 at the power the baseline is "
        "divided by (its rated TDP by default): a basis that flatters Jalapeño (x)"),
    "gb200-gptoss-min-tpot-ms": Quantity(
        "GB200's mean TPOT at concurrency 1 on gpt-oss-120b 8k/1k in the run the seeds' figures come from (ms)",
        {"best GB200 run": "the lowest mean TPOT over every measured GB200 run and stack without speculative "
                           "decoding, not the published run's",
         "modeled": "the calibrated serving model's TPOT at that best measured layout, a prediction"}),
    "gb200-gptoss-single-user-tok-s": Quantity(
        "GB200's single-user speed on gpt-oss-120b 8k/1k, 1 / the mean TPOT at concurrency 1 of the run the "
        "seeds' figures come from (tok/s/user)",
        {"best GB200 run": "1 / the lowest mean TPOT over every measured GB200 run and stack without speculative "
                           "decoding, not the published run's"}),
    "gptoss-tbt-ratio-published": Quantity(
        "GB200's published minimum TBT on gpt-oss-120b over Jalapeño's, from the printed figures (x)"),
    "gptoss-e2e-ratio-published": Quantity(
        "GB200's published lowest E2E on gpt-oss-120b over Jalapeño's, from the printed figures (x)"),
    "jalapeno-gptoss-single-user-tok-s": Quantity(
        "Jalapeño's published single-user speed on gpt-oss-120b 8k/1k (tok/s/user): 1 / its minimum TBT, the "
        "printed 0.69 ms unrounded",
        {"modeled": "the fastest point of Jalapeño's modeled frontier, whose per-layer overhead is fitted to the "
                    "printed TBT of 0.69 ms exactly: 1 / 0.69 ms, below the published 1 / 0.685 ms"}),
    "gptoss-implied-ttft-s": Quantity(
        "the TTFT Jalapeño's published E2E and TBT on gpt-oss-120b imply if they are one operating point: E2E "
        "minus TBT x (mean output length - 1) (s)"),
    "gb200-gptoss-implied-ttft-s": Quantity(
        "the TTFT GB200's published E2E and TBT on gpt-oss-120b imply, by the same rule (s)"),
    "lpx-dsv3-lpus-weights-only": Quantity(
        "the Groq 3 LPUs whose SRAM holds DeepSeek-V3/R1's weights at 8 bits, no KV cache: whole chips, the "
        "ceiling of the SRAM it takes"),
    "lpx-dsv3-racks-weights-only": Quantity(
        "those whole LPUs over the chips of one LPX rack: a fraction of racks, not rounded up (racks)"),
    "jalapeno-dsr1-single-user-chips": Quantity(
        "the chips Jalapeño's DeepSeek-R1 user spreads over at the fastest point of its modeled frontier, where "
        "the fit reproduces the published 700 tok/s (central scenario)",
        {"speed of light": "the fewest chips whose usable HBM holds the weights and the user's KV cache, fast enough "
                           "at the roofline (no per-layer overhead, full bandwidth): a lower bound, not a layout",
         "fewest in the fitted model": "the fewest chips on which the fitted serving model still reaches the "
                                       "published speed, on the best fabric scanned"}),
    "dsr1-comparison-single-user-tok-s": Quantity(
        "the DeepSeek-R1 comparison system's best single-user speed, as seed 001 prints it (tok/s/user)"),
    "scheme-c-heldout-median-pct": Quantity(
        "validation scheme (c), end-point anchored: median over held-out series of the median distance from "
        "each measured frontier point to the predicted frontier (%)"),
    "scheme-c-heldout-p90-pct": Quantity("the same scheme's 90th percentile over held-out series (%)"),
    "scheme-c-band-factor": Quantity(
        "the half-width of scheme (c)'s calibrated 80 % band, the band of every Jalapeño verdict, as a factor "
        "either way (x)"),
    "scheme-c-band-coverage-pct": Quantity("the share of scheme (c)'s held-out points inside that band (%)"),
    "dsr1-matched-ratio-gb300-mtp": Quantity(
        "DeepSeek-R1's matched ratio against a GB300 baseline running MTP at the seeds' 169 tok/s/user: "
        "median and 10-90 % band over Jalapeño's unknowns and the model's error, rated power (x)"),
    "gptoss-matched-ratio-central": Quantity(
        "the modeled gpt-oss-120b matched ratio: Jalapeño's tok/s/kW over GB200's at GB200's fastest measured "
        "point, Jalapeño in its central scenario (x)",
        {"Monte Carlo": "the median and 10-90 % band over draws of Jalapeño's unknowns and the model's error, "
                        "the band the verdicts read, not the central scenario's single value"}),
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
