"""Power per chip under every basis the book uses, each named apart (one definition, used by every chapter).

A per-watt figure is only as meaningful as the watts it divides by. The bases (:data:`POWER_BASES`):

- ``rated``: the chip's rated power (TDP), the basis OpenAI and InferenceX normalise by;
- ``sustained``: the measured sustained power where published (Jalapeño: at most 550 W), else the TDP;
- ``all-in-proportional``: the InferenceX all-in power (accelerator plus its share of host CPUs, memory,
  NICs and switches) where published; else the TDP scaled by the reference chip's all-in / TDP ratio
  (GB200: 2.1 kW / 1.2 kW), InferenceX's own scaling. Jalapeño: 700 W x 1.75 = 1,225 W;
- ``all-in-per-chip``: the published all-in power where there is one; else the TDP plus the reference
  chip's host and network watts per chip (GB200: 2,100 - 1,200 = 900 W), one host and NIC share per
  chip whatever the chip draws. Jalapeño: 700 + 900 = 1,600 W;
- ``facility``: ``all-in-per-chip`` times the PUE (power usage effectiveness, total facility power / IT
  power; default the central PUE of ``data/whatif_ranges.csv``).

The two all-in bases agree for a chip whose all-in power is published and differ for every other: a
chapter that counts all-in watts names which. Throughput per kW is :func:`jalapeno.metrics.throughput_per_kw`.

Source of the all-in figures: the InferenceX dashboard's per-GPU all-in power (``chip_specs.csv``,
``allin_power``). Units: W.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import data, specs
from .errors import UnknownNameError
from .specs import ChipSpec

#: Every power basis, named apart (see the module docstring).
POWER_BASES = ("rated", "sustained", "all-in-proportional", "all-in-per-chip", "facility")

#: How each basis reads in prose and tables.
BASIS_LABELS = {"rated": "rated (TDP)", "sustained": "sustained (measured)",
                "all-in-proportional": "all-in, proportional", "all-in-per-chip": "all-in, per chip",
                "facility": "facility (all-in, per chip, x PUE)"}

#: The chip whose published all-in power sets the host and network share of a chip without one: GB200,
#: the only chip with an InferenceX all-in power in ``chip_specs.csv`` that the seeds compare with.
ALLIN_REFERENCE_CHIP = "gb200"

#: How host and network power per chip is set for a chip whose all-in power is not published: ``none``;
#: ``proportional`` (its TDP times the reference chip's (all-in - TDP) / TDP); ``per-chip`` (the
#: reference chip's all-in - TDP in watts).
OVERHEAD_RULES = ("none", "proportional", "per-chip")


@dataclass(frozen=True)
class PowerStack:
    """Power per chip, split as the seeds' effective task efficiency counts it (W).

    ``accelerator_w``: the chip (rated or sustained); ``host_network_w``: its share of host CPUs, memory,
    NICs and switches (InferenceX publishes only the sum, so the two are one field); ``pue``: power
    usage effectiveness, total facility power / IT power (cooling and power delivery on top of IT).
    Raises ValueError for a negative power or a PUE below 1."""

    accelerator_w: float
    host_network_w: float = 0.0
    pue: float = 1.0

    def __post_init__(self):
        if not self.accelerator_w > 0:
            raise ValueError(f"accelerator_w must be a positive number of watts, got {self.accelerator_w!r}")
        if self.host_network_w < 0:
            raise ValueError(f"host_network_w must be zero or positive, got {self.host_network_w!r}")
        if not self.pue >= 1:
            raise ValueError(f"pue must be at least 1 (total facility power / IT power), got {self.pue!r}")

    @property
    def it_w(self) -> float:
        """Accelerator + host + network (W)."""
        return self.accelerator_w + self.host_network_w

    @property
    def cooling_w(self) -> float:
        """Facility overhead on top of IT, ``IT x (PUE - 1)`` (W): cooling and power delivery."""
        return self.it_w * (self.pue - 1)

    @property
    def total_w(self) -> float:
        """``IT x PUE`` (W)."""
        return self.it_w * self.pue

    def parts(self) -> dict[str, float]:
        """``accelerator_w``, ``host_network_w``, ``cooling_w`` (summing to :attr:`total_w`)."""
        return {"accelerator_w": self.accelerator_w, "host_network_w": self.host_network_w,
                "cooling_w": self.cooling_w}


def _tdp(c: ChipSpec) -> float:
    if not c.tdp_w:
        raise ValueError(f"chip {c.chip!r} has no known TDP; give one with ChipSpec(..., tdp_w=...)")
    return c.tdp_w


def host_network_w(chip: ChipSpec | str, rule: str = "per-chip", reference: str = ALLIN_REFERENCE_CHIP,
                   accelerator_w: float | None = None) -> float:
    """Host and network power per chip (W): the chip's own all-in minus TDP where published; else by
    ``rule`` (:data:`OVERHEAD_RULES`) from ``reference``: ``proportional`` scales ``accelerator_w``
    (default the TDP) by the reference's (all-in - TDP) / TDP, ``per-chip`` adds the reference's
    all-in - TDP. UnknownNameError for an unknown rule, ValueError when the chip or the reference lacks
    a TDP (or the reference an all-in power)."""
    if rule not in OVERHEAD_RULES:
        raise UnknownNameError("overhead rule", rule, OVERHEAD_RULES)
    c = specs.chip(chip)
    tdp = _tdp(c)
    if c.allin_power_w:
        return c.allin_power_w - tdp
    if rule == "none":
        return 0.0
    ref = specs.chip(reference)
    if not (ref.allin_power_w and ref.tdp_w):
        raise ValueError(f"reference chip {ref.chip!r} has no published all-in power and TDP")
    extra = ref.allin_power_w - ref.tdp_w
    return (accelerator_w or tdp) * extra / ref.tdp_w if rule == "proportional" else extra


def power_stack(chip: ChipSpec | str, basis: str = "rated", *, pue: float | None = None,
                sustained_w: float | None = None, reference: str = ALLIN_REFERENCE_CHIP) -> PowerStack:
    """The :class:`PowerStack` of ``chip`` under one of :data:`POWER_BASES`. ``sustained_w`` replaces the
    chip's published sustained power (``sustained`` basis only); ``pue`` (``facility`` only) defaults to
    the central PUE of ``whatif_ranges.csv``. UnknownNameError for another basis, ValueError for a chip
    without TDP."""
    if basis not in POWER_BASES:
        raise UnknownNameError("power basis", basis, POWER_BASES)
    c = specs.chip(chip)
    tdp = _tdp(c)
    if basis == "rated":
        return PowerStack(tdp)
    if basis == "sustained":
        return PowerStack(sustained_w or c.sustained_power_w or tdp)
    if basis == "all-in-proportional":
        return PowerStack(tdp, host_network_w(c, "proportional", reference))
    hn = host_network_w(c, "per-chip", reference)
    return PowerStack(tdp, hn, 1.0 if basis == "all-in-per-chip" else (data.whatif("pue") if pue is None else pue))


def power_w(chip: ChipSpec | str, basis: str = "rated", **options) -> float:
    """Watts per chip under one of :data:`POWER_BASES` (:func:`power_stack`'s total; ``options`` pass
    to it)."""
    return power_stack(chip, basis, **options).total_w
