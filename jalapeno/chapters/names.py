"""The kinds of names a chapter's parameter may declare (``Parameter("chips", ["gb200"], names="chip")``), each with
the function that lists the valid names: :mod:`jalapeno.publish.params` checks a value against them
before a notebook runs."""

from __future__ import annotations

from collections.abc import Callable

from .. import agents, measured, registry, specs, systems

NAME_KINDS: dict[str, Callable[[], list[str]]] = {
    "chip": specs.chip_names, "HBM chip": specs.hbm_chip_names, "model": specs.model_names,
    "system": systems.system_names,
    "precision": lambda: list(specs.BYTES_PER_VALUE),
    "measured hardware": measured.hardware_names,
    "run id": lambda: ["auto", *measured.run_ids()],
    "agent profile": lambda: list(agents.PROFILES),
    "claim status": lambda: ["all", *registry.STATUSES]}
