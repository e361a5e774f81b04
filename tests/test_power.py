"""The power bases, one definition each: hand-worked watts per chip for Jalapeño (700 W TDP, 550 W
sustained) and GB200 (1,200 W TDP, 2,100 W InferenceX all-in), and the same name giving the same watts in
every chapter's module."""

import pytest

import jalapeno as jp
from jalapeno import comparison, power


def test_every_basis_hand_worked():
    j = {b: power.power_w("jalapeno", b, pue=1.5) for b in power.POWER_BASES}
    assert j == pytest.approx({"rated": 700.0, "sustained": 550.0,
                               "all-in-proportional": 700 * 2.1 / 1.2,     # 1,225 W: GB200's all-in / TDP ratio
                               "all-in-per-chip": 700 + (2100 - 1200),     # 1,600 W: GB200's host and network
                               "facility": (700 + 900) * 1.5})
    g = {b: power.power_w("gb200", b, pue=1.5) for b in power.POWER_BASES}
    assert g["all-in-proportional"] == g["all-in-per-chip"] == 2100.0       # published: both all-in bases agree
    assert g["sustained"] == 1200.0                                         # not published: the TDP stands in
    assert power.power_w("jalapeno", "facility") == pytest.approx(1600 * 1.2)   # central PUE of whatif_ranges.csv
    assert power.power_w("jalapeno", "sustained", sustained_w=500.0) == 500.0


def test_power_stack_and_overhead_rules():
    s = power.PowerStack(700.0, 900.0, 1.2)
    assert (s.it_w, s.total_w, s.cooling_w) == (1600.0, pytest.approx(1920.0), pytest.approx(320.0))
    assert sum(s.parts().values()) == pytest.approx(s.total_w)
    assert power.host_network_w("jalapeno", "proportional") == pytest.approx(700 * 0.9 / 1.2)
    assert power.host_network_w("jalapeno", "per-chip") == pytest.approx(900.0)
    assert power.host_network_w("gb200", "none") == pytest.approx(900.0)   # its own all-in wins
    assert power.power_stack("gb200", "facility", pue=1.5).total_w == pytest.approx(2100 * 1.5)
    with pytest.raises(ValueError, match="pue must be at least 1"):
        power.PowerStack(700.0, pue=0.9)
    with pytest.raises(jp.UnknownNameError, match="valid overhead rules: none, proportional, per-chip"):
        power.host_network_w("jalapeno", "flat")
    with pytest.raises(jp.UnknownNameError,
                       match="valid power bases: rated, sustained, all-in-proportional, all-in-per-chip, facility"):
        power.power_stack("jalapeno", "all-in")   # ambiguous: the two all-in bases are named apart


def test_reading_the_numbers_all_in_is_the_proportional_basis():
    t = {r["basis"]: r for r in comparison.power_basis_table(comparison.baseline_summary()).iter_rows(named=True)}
    assert t["all-in-proportional"]["jalapeno_w"] == power.power_w("jalapeno", "all-in-proportional") == 1225.0
    assert t["all-in-proportional"]["baseline_w"] == 2100.0


def test_jalapenos_all_in_power_follows_the_baseline_chosen():
    """Jalapeño's all-in power is not published, so it is scaled from the baseline's own all-in / TDP ratio:
    against H200 (700 W TDP, 1,730 W all-in in chip_specs.csv) 700 W x 1,730 / 700 = 1,730 W, and the
    proportional all-in ratio equals the rated one whatever the baseline (both sides scaled alike); against
    GB200 the published 1,225 W (700 x 2.1 / 1.2)."""
    from jalapeno import comparison
    for hw, allin in (("h200", 1730.0), ("gb200", 1225.0)):
        t = {r["basis"]: r for r in comparison.power_basis_table(baseline_hw=hw).iter_rows(named=True)}
        assert t["all-in-proportional"]["jalapeno_w"] == pytest.approx(allin, rel=1e-12)
        assert t["all-in-proportional"]["ratio"] == pytest.approx(t["rated"]["ratio"], rel=1e-12)
