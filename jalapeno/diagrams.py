"""Node-link drawings of fabrics, computed from a :class:`jalapeno.network.Topology`'s own graph, for the
diagrams of :func:`jalapeno.chapters.systems.topology_diagram`.

A drawing is layout, not physics: it sits beside the charts, above :mod:`jalapeno.network`, and every link
it draws is one of :meth:`~jalapeno.network.Topology.edges` (every hop count one of its
:meth:`~jalapeno.network.Topology.distances`), so a diagram cannot disagree with the hop counts the
chapters quote.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from .network import Topology

#: Most top-level units whose every link a Dragonfly drawing draws; above it only the links of unit 0.
DRAWING_MAX_UNITS = 64


def _circle(count: int, radius: float = 1.0, centre: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
    """``count`` points on a circle, the first at the top, clockwise: an ``(count, 2)`` array."""
    angle = np.pi / 2 - 2 * np.pi * np.arange(count) / max(count, 1)
    return np.column_stack([centre[0] + radius * np.cos(angle), centre[1] + radius * np.sin(angle)])


def _nested_circles(levels: tuple[int, ...]) -> np.ndarray:
    """Positions of the ``prod(levels)`` chips of a hierarchy (chip ``c1 + a1 c2 + ...``): the units of the
    top level on a circle of radius 1, each unit's sub-units on a smaller circle around its centre, and so
    on down to the chips (a level of one unit adds nothing)."""
    pos = np.zeros((math.prod(levels), 2))
    radius = 1.0
    stride = math.prod(levels)
    for a in reversed(levels):
        stride //= a
        if a > 1:
            digit = (np.arange(pos.shape[0]) // stride) % a
            pos += _circle(a, radius)[digit]
            radius *= 0.85 * math.sin(math.pi / a) if a > 2 else 0.4
    return pos


def drawing(topo: Topology, *, reference: int = 0) -> dict[str, object]:
    """A deterministic node-link drawing of ``topo``, computed from its shape and its graph
    (:meth:`jalapeno.network.Topology.edges`, :meth:`~jalapeno.network.Topology.distances`), for a diagram of the fabric.

    Returns ``nodes`` (polars: ``panel``, ``node``, ``x``, ``y``, ``role`` (``chip``, ``reference chip``,
    ``switch``, ``unit``), ``chips`` (chips a node stands for), ``hops`` (from chip ``reference``; for a
    unit, to its farthest chip; null for a switch)), ``links`` (``panel``, ``x``, ``y``, ``x2``, ``y2``,
    ``kind``: ``link``, ``switch link``, ``wraparound`` (a stub at the edge of the grid, pointing to the
    chip on the far side), ``level N`` (a Dragonfly link of level N)), ``panels`` (panel -> what it shows)
    and ``notes`` (what the drawing leaves out, in words). Coordinates are abstract (about -1.2 to 1.2,
    or grid units for a torus or mesh).

    Layouts: a switched domain as a star (chips on a circle, one switch at the centre: every pair is one
    hop apart); a ring as a circle; a torus or mesh as one plane of its two last (largest) axes, the chips
    on a grid, wraparound links as stubs, the other axes noted; a Dragonfly as two panels, one top-level
    unit drawn chip by chip (sub-units on nested circles) and the top level as units on a circle with the
    links between them (all of them up to :data:`DRAWING_MAX_UNITS` units, else unit 0's). ValueError for a
    ``reference`` that is not a chip; CostError for a topology too large for its graph (:func:`jalapeno.network.check_graph`)."""
    n = topo.n_chips
    if not 0 <= reference < n:
        raise ValueError(f"reference must be a chip index in [0, {n}), got {reference!r}")
    hops = topo.distances()[reference].astype(np.int64)
    edges = topo.edges()
    nodes: list[dict] = []
    links: list[dict] = []
    panels: dict[str, str] = {}
    notes: list[str] = []

    def chip_row(panel: str, c: int, x: float, y: float) -> dict:
        return {"panel": panel, "node": int(c), "x": float(x), "y": float(y),
                "role": "reference chip" if c == reference else "chip", "chips": 1, "hops": int(hops[c])}

    def link_row(panel: str, p, q, kind: str) -> dict:
        return {"panel": panel, "x": float(p[0]), "y": float(p[1]), "x2": float(q[0]), "y2": float(q[1]), "kind": kind}

    if topo.kind == "switched" or (topo.kind == "dragonfly" and sum(a > 1 for a in topo.shape) <= 1):
        panel = "fabric"
        pos = _circle(n)
        nodes += [chip_row(panel, c, *pos[c]) for c in range(n)]
        if topo.kind == "switched":
            panels[panel] = f"{n} chips on one switch"
            nodes.append({"panel": panel, "node": -1, "x": 0.0, "y": 0.0, "role": "switch", "chips": 0, "hops": None})
            links += [link_row(panel, pos[c], (0.0, 0.0), "switch link") for c in range(n)]
        else:
            panels[panel] = f"{n} chips, fully connected"
            links += [link_row(panel, pos[a], pos[b], "link") for a, b in edges]
    elif topo.kind in ("ring", "torus", "mesh"):
        panel = "plane"
        dims = topo.shape
        coords = np.array(np.unravel_index(np.arange(n), dims)).T  # chip -> its coordinates
        if len(dims) == 1:
            pos = _circle(n) if topo.kind != "mesh" else np.column_stack([np.arange(n), np.zeros(n)])
            drawn = np.arange(n)
            panels[panel] = f"{n} chips"
        else:
            # the plane of the two last axes through the reference chip
            fixed = coords[reference, :-2]
            drawn = np.flatnonzero((coords[:, :-2] == fixed).all(axis=1))
            pos = np.column_stack([coords[:, -1], -coords[:, -2]]).astype(float)
            panels[panel] = f"one {dims[-2]} x {dims[-1]} plane" if len(dims) > 2 else f"{dims[-2]} x {dims[-1]} chips"
            planes = math.prod(dims[:-2])
            shape = f" ({' x '.join(map(str, dims[:-2]))})" if len(dims) > 3 else ""
            if len(dims) > 2:
                notes.append(f"one of {planes} planes{shape}; each chip also links to the chips above and below it "
                             f"in the next planes" + (", with wraparound" if topo.kind == "torus" else ""))
            if topo.kind == "torus":
                notes.append("dashed stubs: wraparound links to the chip at the other end of the row or column")
        in_plane = np.zeros(n, dtype=bool)
        in_plane[drawn] = True
        nodes += [chip_row(panel, c, *pos[c]) for c in drawn]
        for a, b in edges:
            if not (in_plane[a] and in_plane[b]):
                continue
            step = np.abs(coords[a] - coords[b])
            if len(dims) > 1 and step.max() > 1:  # a wraparound link: a stub out of each end
                axis = int(np.argmax(step))
                direction = np.array([1.0, 0.0]) if axis == len(dims) - 1 else np.array([0.0, -1.0])
                lo, hi = (a, b) if coords[a][axis] < coords[b][axis] else (b, a)
                links.append(link_row(panel, pos[lo], pos[lo] - 0.4 * direction, "wraparound"))
                links.append(link_row(panel, pos[hi], pos[hi] + 0.4 * direction, "wraparound"))
            else:
                links.append(link_row(panel, pos[a], pos[b], "link"))
    else:  # a Dragonfly of two levels or more
        levels = topo.shape
        top = levels[-1]
        per_unit = n // top
        inner = levels[:-1]
        unit = "unit"
        panel_in, panel_top = "one unit", "all units"
        panels[panel_in] = f"one unit of {per_unit} chips ({' x '.join(map(str, inner))})"
        panels[panel_top] = f"{top} units, one link per pair"
        pos = _nested_circles(inner)
        base = (reference // per_unit) * per_unit
        nodes += [chip_row(panel_in, base + c, *pos[c]) for c in range(per_unit)]
        strides = np.cumprod((1,) + levels[:-1])  # chips per unit of each level

        def level_of(a: int, b: int) -> int:  # the level whose link joins chips a and b
            return int(max(i for i, s in enumerate(strides) if a // s != b // s)) + 1

        for a, b in edges:
            if base <= a < base + per_unit and base <= b < base + per_unit:
                links.append(link_row(panel_in, pos[a - base], pos[b - base], f"level {level_of(a, b)}"))
        upos = _circle(top)
        unit_of = np.arange(n) // per_unit
        far = np.zeros(top, dtype=np.int64)
        np.maximum.at(far, unit_of, hops)
        nodes += [{"panel": panel_top, "node": int(u), "x": float(upos[u][0]), "y": float(upos[u][1]),
                   "role": unit, "chips": per_unit, "hops": int(far[u])} for u in range(top)]
        pairs = sorted({(int(unit_of[a]), int(unit_of[b])) for a, b in edges if unit_of[a] != unit_of[b]})
        if top > DRAWING_MAX_UNITS:
            pairs = [(u, v) for u, v in pairs if u == unit_of[reference] or v == unit_of[reference]]
            notes.append(f"links of one unit shown (of {top * (top - 1) // 2:,})")
        links += [link_row(panel_top, upos[u], upos[v], f"level {len(levels)}") for u, v in pairs]
    schema_n = {"panel": pl.String, "node": pl.Int64, "x": pl.Float64, "y": pl.Float64, "role": pl.String,
                "chips": pl.Int64, "hops": pl.Int64}
    schema_l = {"panel": pl.String, "x": pl.Float64, "y": pl.Float64, "x2": pl.Float64, "y2": pl.Float64,
                "kind": pl.String}
    return {"nodes": pl.DataFrame(nodes, schema=schema_n), "links": pl.DataFrame(links, schema=schema_l),
            "panels": panels, "notes": notes}
