"""The verdict: the book's answer in one screen. The answer in words first (the per-watt advantage under
each power basis, what the matched-interactivity ratios measure and where each published ratio lies
against the model's band, the condition DeepSeek-R1's ratio hinges on, and what no public measurement
confirms); then each headline claim of the seeds with what the book computes for it (a value, or a band
for a prediction), where the published value lies against it, its status in the claims registry and the
chapter that derives it; the count of claims and computations per status, Jalapeño's performance apart
from the rest; the downloads."""

from __future__ import annotations

import polars as pl

from .. import baselines, caveats, comparison, pareto, registry, specs, subject, uncertainty
from ..data import claim_value, seeds_table
from ..display import number
from . import Chapter, Parameter, quotes

#: The headline claims the verdict page opens with, in the order a reader meets them.
HEADLINES = ("headline-per-watt-ratio", "headline-e2e-ratio", "single-user-speed-ratio-gptoss",
             "single-user-speed-ratio-dsr1", "headline-interactive-ratio", "gptoss-matched-tbt-ratio",
             "kimi-matched-tbt-ratio", "dsr1-matched-tbt-ratio", "kimi-per-watt-ratio", "kimi-tbt-ratio")

#: The published matched-interactivity ratios the answer states, each under its key prefix
#: (:data:`jalapeno.pareto.PUBLISHED_RATIOS`: the model, its claim and its baseline chip).
MATCHED = {"gptoss": "gpt-oss-120b", "dsr1": "deepseek-r1", "kimi": "kimi-k2.5"}

#: The per-watt advantage's power bases the answer states (rows of :data:`jalapeno.comparison.POWER_BASIS_ROWS`)
#: under their keys.
POWER_KEYS = {"pw_rated": "rated", "pw_sus_j": "sustained", "pw_sus_both": "sustained, both",
              "pw_allin": "all-in-per-chip"}

#: The registered quantities (:mod:`jalapeno.chapters.quantities`) of the bases other chapters show too.
POWER_QUANTITIES = {"rated": "gptoss-per-watt-ratio-rated", "sustained": "gptoss-per-watt-ratio-jalapeno-sustained"}

#: The chip the per-watt advantage is taken against (the published comparison's, measured by InferenceMAX).
POWER_BASELINE = "gb200"

#: The baseline assumption set of :data:`jalapeno.baselines.ASSUMPTION_SETS` the 104.3x question turns on:
#: GB300 with MTP at the seeds' single-user speed (the Pareto chapter's ``q_mtp_seeds``).
MTP_SET = "MTP at the seeds' single-user speed"

#: How each agreeing status agrees, for the answer's words (:data:`jalapeno.registry.AGREEING`).
AGREEMENT_HOW = {"reproduced": "recomputed from measured data",
                 "consistent": "published numbers that agree with each other by arithmetic",
                 "predicted, agrees": "a published number inside the model's band"}

#: The statuses that agree by construction: the number was fitted to, or follows from one that was.
FITTED = ("fit-determined", "fit target")


#: What the chapter takes (:class:`jalapeno.chapters.Parameter`); the notebook's parameters cell is generated from it.
PARAMETERS = (
    Parameter("claims", list(HEADLINES), "the claim ids of data/claims.csv the page opens with, in order"),)


def compute(*, claims: list[str]) -> Chapter:
    """The verdict page for the claims ``claims`` (:data:`PARAMETERS`: ids of ``data/claims.csv``,
    default :data:`HEADLINES`).

    Returns the table ``headlines`` (claim, what the seeds say, what the book computes, where the published
    value lies against it, status, the chapter that derives it), the table ``statuses`` (per status of
    :data:`jalapeno.registry.STATUSES`: whether it counts as agreement, and claims and computations in
    each group of :func:`jalapeno.registry.verdict_counts`) and quoted numbers:

    - the answer's per-watt advantage on gpt-oss-120b (Jalapeño's tok/s/kW over the baseline's, ratio
      ``{:.2f}``): ``pw_rated``, ``pw_sus_j`` (Jalapeño's sustained draw against the baseline's rated
      TDP), ``pw_sus_both``, ``pw_allin`` (all-in per chip) of
      :func:`jalapeno.comparison.power_basis_table`, ``pw_baseline`` (its baseline chip,
      :data:`POWER_BASELINE`), and
      ``pw_best`` against ``pw_best_chip``, the chip with the highest measured tok/s/kW at rated TDP
      (:func:`jalapeno.caveats.measured_chip_comparison`);
    - per matched ratio (prefix ``gptoss``, ``dsr1``, ``kimi`` of :data:`MATCHED`): ``r_<prefix>`` (the
      published ratio), ``<prefix>_band`` (the model's median and band,
      :func:`jalapeno.uncertainty.headline_ratios`, ``114x (37x–363x)``), ``<prefix>_pos`` (the registry's
      ``published_vs_computed``), ``<prefix>_base`` (the baseline chip);
    - DeepSeek-R1's ratio with a GB300 baseline running MTP at the seeds' single-user speed
      (:data:`MTP_SET`, :func:`jalapeno.baselines.ratios_by_assumption` and the Pareto chapter's band):
      ``mtp_ratio`` (band text), ``mtp_at`` (tok/s/user), ``mtp_pos`` (where 104.3x lies against it,
      :func:`jalapeno.registry.position`);
    - the counts of claims about Jalapeño's performance (:func:`jalapeno.registry.verdict_counts`):
      ``perf_claims``, ``perf_computations``, ``perf_agree`` (computations whose status counts as
      agreement), ``perf_agree_how`` (those per status, in words), ``perf_fitted`` (computations fit target
      or fit-determined), ``perf_other`` (the rest, in words), ``perf_reproduced`` (computations
      reproduced from measured data) and ``perf_confirm`` (what follows from it, to end "Of the agreeing
      ones, ..."; lower case);
    - ``n_claims``, ``n_seeds``, ``n_agreeing``, ``n_disagreeing`` (the predictions that disagree with a
      published number, and not reproduced or inconsistent checks), ``disagree_verb``, per headline claim
      ``<claim id>`` (its status), and the model's error the predictions' bands carry (scheme (c)
      end-point anchored, :func:`jalapeno.chapters.quotes.model_error`: ``err_scheme``, ``err_median``,
      ``err_p90``, ``err_n``, ``err_factor``, ``err_cov`` ...).

    Raises UnknownNameError for an unknown claim id."""
    table = registry.claims()
    rows = [registry.claim(c) for c in claims]  # UnknownNameError lists the valid ids
    ch = Chapter()
    ens = uncertainty.ensemble()
    _power(ch)
    _matched(ch, ens)
    _mtp(ch, ens)
    counts = registry.verdict_counts(table)
    _performance(ch, counts)
    which = "The headline claims" if set(claims) <= set(HEADLINES) else "The chosen claims"
    ch.add_table("headlines", pl.DataFrame({
        "claim": [_claim_label(r) for r in rows],
        "the seeds say": [r["claimed"] for r in rows],
        "the book computes": [r["computed"] or "—" for r in rows],
        "published vs computed": [r["published_vs_computed"] or "—" for r in rows],
        "status": [r["status"] for r in rows],
        "derived in (chapter)": [r["chapter"] for r in rows]}),
        f"{which}: claimed and computed values, where the published value lies, status, deriving chapter")
    for r in rows:
        ch.quote(r["claim_id"], r["status"])
    ch.add_table("statuses", _statuses_table(counts),
                 "Claims and computations per status, those about Jalapeño's performance apart, and what counts "
                 "as agreement")
    by_status = registry.status_counts(table)
    ch.quote("n_claims", table.height, "{:,}")
    ch.quote("n_seeds", seeds_table().height)
    ch.quote("n_agreeing", sum(n for s, n in by_status.items() if s in registry.AGREEING))
    n_disagreeing = sum(by_status.get(s, 0) for s in ("predicted, disagrees", "not reproduced", "inconsistent"))
    ch.quote("n_disagreeing", n_disagreeing)
    ch.quote("disagree_verb", "disagrees" if n_disagreeing == 1 else "disagree")
    quotes.model_error(ch)  # the error every predicted verdict's band carries: scheme (c)
    return ch


def _named(key: str) -> str:
    """A chip or model key as the book names it (``jalapeno`` -> ``OpenAI Jalapeño``, ``deepseek-r1`` ->
    ``DeepSeek-R1-0528``); any other subject as the claims table writes it."""
    if key in specs.chip_names():
        return specs.chip(key).display_name
    return specs.model(key).display_name if key in specs.model_names() else key


def _claim_label(r: dict) -> str:
    """A claim as the verdict table names it: its subject, the comparator, the quantity and the models it
    is about (``OpenAI Jalapeño vs ...: peak single-user speed, ... (gpt-oss-120b, Kimi K2.5)``)."""
    models = ", ".join(_named(m) for m in r["model"].split(";")) if r.get("model") else ""
    return (_named(r["subject"]) + (f" vs {r['comparator']}" if r.get("comparator") else "") + f": {r['quantity']}"
            + (f" ({models})" if models else ""))


def _short(chip: str) -> str:
    """A chip as the field names it in prose: ``gb200`` -> ``GB200``."""
    return specs.chip(chip).chip.upper()


def _power(ch: Chapter) -> None:
    """The per-watt advantage on gpt-oss-120b under each power basis of :data:`POWER_KEYS` (the caveats
    chapter's table) and against the chip with the best measured tok/s/kW."""
    bases = comparison.power_basis_table(bases=tuple(POWER_KEYS.values()), baseline_hw=POWER_BASELINE)
    ratio = dict(zip(bases["basis"], bases["ratio"]))
    for key, basis in POWER_KEYS.items():
        ch.quote(key, ratio[basis], "{:.2f}", quantity=POWER_QUANTITIES.get(basis))
    ch.quote("pw_baseline", _short(POWER_BASELINE))
    top = caveats.measured_chip_comparison("gpt-oss-120b").row(0, named=True)  # sorted by tok/s/kW, best first
    ch.quote("pw_best", top["per_kw_ratio"], "{:.2f}")
    ch.quote("pw_best_chip", _short(top["chip"]))


def _matched(ch: Chapter, ens: uncertainty.Ensemble) -> None:
    """Each published matched-interactivity ratio, the model's band for it and where it lies (the
    registry's ``published_vs_computed``)."""
    bands = {r["model"]: r for r in uncertainty.headline_ratios(ens, list(MATCHED.values())).iter_rows(named=True)}
    for key, model in MATCHED.items():
        claim_id, chip = pareto.PUBLISHED_RATIOS[model]
        row, b = registry.claim(claim_id), bands[model]
        ch.quote(f"r_{key}", claim_value(claim_id), "{:g}")
        ch.quote(f"{key}_band", uncertainty.Band(b["ratio_median"], b["ratio_low"], b["ratio_high"]).text(unit="x"),
                 **({"quantity": "gptoss-matched-ratio-central", "variant": "Monte Carlo"} if key == "gptoss" else {}))
        ch.quote(f"{key}_pos", row["published_vs_computed"] or row["status"])
        ch.quote(f"{key}_base", _short(chip))


def _mtp(ch: Chapter, ens: uncertainty.Ensemble) -> None:
    """DeepSeek-R1's matched ratio against GB300 with MTP at the seeds' single-user speed: the ratio of
    :func:`jalapeno.baselines.ratios_by_assumption` with Jalapeño's band over the ensemble, as the Pareto
    chapter computes it (rated power)."""
    r = baselines.ratios_by_assumption(["deepseek-r1"], sets=[MTP_SET],
                                       fits={"central": subject.fit_jalapeno("central")}).row(0, named=True)
    x = r["interactivity_tok_s_user"]
    b = uncertainty.ratio_band_at(ens, "deepseek-r1", x, r["baseline_tok_s_kw"])
    ch.quote("mtp_ratio", b.text(unit="x"), quantity="dsr1-matched-ratio-gb300-mtp")
    ch.quote("mtp_at", x, "{:.0f}")
    ch.quote("mtp_pos", registry.position(r["published_ratio"], b.low, b.high, b.median))


def _performance(ch: Chapter, counts: pl.DataFrame) -> None:
    """What the claims about Jalapeño's performance show, counted by computation; the sentence on
    independent confirmation follows from the count of ``reproduced`` ones."""
    perf = counts.filter(pl.col("group") == registry.GROUPS[0])
    comp = dict(zip(perf["status"], perf["computations"]))
    ch.quote("perf_claims", int(perf["claims"].sum()))
    ch.quote("perf_computations", int(perf["computations"].sum()))
    ch.quote("perf_agree", sum(comp[s] for s in registry.AGREEING))
    ch.quote("perf_agree_how", _listed([f"{comp[s]} {s} ({AGREEMENT_HOW[s]})" for s in registry.AGREEING if comp[s]]))
    ch.quote("perf_fitted", sum(comp[s] for s in FITTED))
    rest = [s for s in registry.STATUSES if s not in registry.AGREEING and s not in FITTED and comp[s]]
    ch.quote("perf_other", _listed([f"{comp[s]} {s}" for s in rest]) or "none")
    n = comp["reproduced"]
    ch.quote("perf_reproduced", n)
    ch.quote("perf_confirm", "none is reproduced from measured data: no agreeing claim confirms a Jalapeño "
             "performance number by an independent measurement" if n == 0 else
             f"{number(n):,} {'is' if n == 1 else 'are'} reproduced from measured data")


def _listed(parts: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1] if parts else ""


def _statuses_table(counts: pl.DataFrame) -> pl.DataFrame:
    """One row per status: whether it counts as agreement, then claims and computations per group."""
    out = pl.DataFrame({"status": list(registry.STATUSES),
                        "counts as agreement": ["yes" if s in registry.AGREEING else "no" for s in registry.STATUSES]})
    for g in registry.GROUPS:
        sel = counts.filter(pl.col("group") == g)
        out = out.join(sel.select("status", pl.col("claims").alias(f"{g}: claims"),
                                  pl.col("computations").alias(f"{g}: computations")), on="status", how="left")
    return out
