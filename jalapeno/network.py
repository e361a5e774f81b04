"""Interconnect topologies and the time of collectives on them (alpha-beta model).

A :class:`Topology` describes how the chips of one system are wired; every hop count is computed from
that wiring for the given size, never typed. Definitions (SI units throughout):

- *hop*: one traversal of a chip-to-chip link, or of one switch stage between two chips (a single-stage
  switched domain such as an NVLink Switch fabric puts every pair of chips one hop apart);
- *diameter*: the longest shortest path, in hops; *average hop count*: the mean shortest path over
  ordered pairs of distinct chips;
- *injection bandwidth* ``W``: bytes/s one chip can send in one direction (half the scale-up bandwidth
  vendors quote with both directions summed); a chip with ``p`` ports has links of ``W / p`` each;
- *bisection bandwidth*: bytes/s crossing, in one direction, the cut of the system into two equal halves
  across its widest dimension (torus) or its top level (Dragonfly).

Topologies (closed forms; the tests check them against breadth-first search on the explicit graph):

- ``switched`` (n): single-stage non-blocking switch; diameter 1, average 1, bisection ``n/2 W``.
- ``ring`` (n) = 1-D ``torus``; ``torus`` (k1 x k2 x ...) with wraparound: diameter ``sum floor(k_i/2)``,
  average ``N/(N-1) sum_i floor(k_i^2/4)/k_i`` (per-axis ring distances add; Dally & Towles, *Principles
  and Practices of Interconnection Networks*, 2004, ch. 5); ``mesh``: the same without wraparound,
  diameter ``sum (k_i - 1)``, average ``N/(N-1) sum_i (k_i^2 - 1)/(3 k_i)``.
- ``dragonfly`` (a1 x a2 x ... x aL): a hierarchy of fully connected levels (Kim et al., ISCA 2008;
  TPU 8i's Boardfly is 4 x 8 x 36): the ``a1`` chips of a first-level unit are fully connected; at each
  higher level ``l``, the ``a_l`` units of level ``l - 1`` are fully connected by one link per pair,
  attached round-robin to the chips of each unit. A minimal path climbs to the lowest common level and
  back, crossing one link per level on each side: diameter ``2^L - 1`` when no link lands on the
  endpoints (the graph is built and searched to confirm it); the average is computed by search.

Collectives (alpha-beta; modeling reference ``shared/notes/modeling-reference.md``, jax-ml/scaling-book
Part 3; ``h`` = hop latency, ``D`` = diameter, ``H`` = average hops, ``N`` chips, message ``M`` bytes):

- point to point (cut-through, one path): ``hops h + M / W_link``; a pipeline hand-off is one of these
  between neighbouring stages (one hop by default);
- all-reduce, latency-optimal (``direct``): ``alpha0 + 2 D h + 2 (N-1)/N M / W``; ``ring``:
  ``alpha0 + 2 (N-1) h + 2 (N-1)/N M / W`` (reduce-scatter then all-gather, each moving
  ``(N-1)/N M`` bytes out of every chip);
- all-to-all with ``M_out`` bytes leaving each chip: ``alpha0 + D h + M_out max(1, H) / W``: every byte
  crosses ``H`` links on average and each chip's links carry ``W`` in total (the hop-bytes bound of
  channel load; a switch crossing does not use a second chip's port, so ``H = 1`` when switched).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, replace

import numpy as np

from .errors import CostError, UnknownNameError

#: Topology kinds and what their ``shape`` means.
KINDS = {
    "switched": "(n,): n chips on one single-stage non-blocking switch",
    "ring": "(n,): n chips in a bidirectional ring",
    "torus": "(k1, k2, ...): a k1 x k2 x ... grid with wraparound links",
    "mesh": "(k1, k2, ...): a k1 x k2 x ... grid without wraparound",
    "dragonfly": "(a1, a2, ...): fully connected levels of a1 chips, a2 units of a1, ...",
}

#: Largest fabric whose graph is built and searched: chips (the all-pairs search holds chips^2 distances,
#: 134 MB at this limit, and takes about 2 s for a 4,096-chip torus) and links (a search visits every link
#: from every chip: 3.5 s for the 145,152 links of an 8 x 512 Dragonfly, measured). The book's largest
#: graph, the TPU 8i Boardfly of 1,152 chips, has 3,366 links.
MAX_GRAPH_CHIPS = 4_096
MAX_GRAPH_LINKS = 200_000


def link_count(kind: str, shape: tuple[int, ...]) -> int:
    """Links of the graph :meth:`Topology.edges` builds, counted in closed form without building it:
    ``switched`` n(n-1)/2 (the complete graph); ``ring``/``torus`` n per axis of size 3 or more, n/2 per
    axis of 2; ``mesh`` n (k-1)/k per axis of size k; ``dragonfly`` a1(a1-1)/2 per first-level unit and
    a(a-1)/2 per unit of each higher level of ``a`` sub-units."""
    n = math.prod(shape)
    if kind == "switched":
        return n * (n - 1) // 2
    if kind in ("ring", "torus"):
        return sum(n if k >= 3 else n // 2 if k == 2 else 0 for k in shape)
    if kind == "mesh":
        return sum(n // k * (k - 1) for k in shape)
    units, total = n, 0
    for a in shape:  # dragonfly: n / (a1 ... al) units at level l, each a(a-1)/2 links
        units //= a
        total += units * a * (a - 1) // 2
    return total


def check_graph(kind: str, shape: tuple[int, ...]) -> None:
    """Refuse to build or search a graph above :data:`MAX_GRAPH_CHIPS` chips or :data:`MAX_GRAPH_LINKS`
    links (:func:`link_count`): CostError naming the topology, its size and the limit."""
    n, links = math.prod(shape), link_count(kind, shape)
    label = f"{kind} {'x'.join(map(str, shape))}"
    if n > MAX_GRAPH_CHIPS:
        raise CostError(f"{label}: {n:,} chips is above the limit of {MAX_GRAPH_CHIPS:,} chips for a fabric "
                        "searched as a graph")
    if links > MAX_GRAPH_LINKS:
        raise CostError(f"{label}: {links:,} links is above the limit of {MAX_GRAPH_LINKS:,} links for a fabric "
                        "searched as a graph")


def parse_shape(shape: str | int | tuple | list) -> tuple[int, ...]:
    """A shape as a tuple of positive integers, from ``"8x8x16"``, ``72``, ``(4, 8, 36)``.

    Raises ValueError naming the bad shape."""
    if isinstance(shape, str):
        parts = shape.lower().replace("×", "x").split("x")
    elif isinstance(shape, (int, np.integer)):
        parts = [shape]
    else:
        parts = list(shape)
    try:
        out = tuple(int(p) for p in parts)
    except (TypeError, ValueError):
        raise ValueError(f"shape must be positive integers like '8x8x16' or (4, 8, 36), got {shape!r}") from None
    if not out or any(k < 1 for k in out) or any(float(p) != int(float(p)) for p in parts):
        raise ValueError(f"shape must be positive integers like '8x8x16' or (4, 8, 36), got {shape!r}")
    return out


@dataclass(frozen=True)
class Topology:
    """The fabric of one system: its ``kind`` (a key of :data:`KINDS`), ``shape`` (see :data:`KINDS`),
    ``hop_latency_s`` (s per hop) and ``injection_bandwidth_bytes_per_s`` (bytes/s one chip sends in one
    direction, all its ports together). Build one with :func:`topology` or the helpers below."""

    kind: str
    shape: tuple[int, ...]
    hop_latency_s: float = 0.0
    injection_bandwidth_bytes_per_s: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise UnknownNameError("topology", self.kind, list(KINDS))
        object.__setattr__(self, "shape", parse_shape(self.shape))
        if self.kind in ("switched", "ring") and len(self.shape) != 1:
            raise ValueError(f"a {self.kind} topology takes one size, e.g. (72,), got shape {self.shape!r}")
        if self.hop_latency_s < 0 or self.injection_bandwidth_bytes_per_s < 0:
            raise ValueError(f"hop latency and bandwidth must be non-negative, got hop_latency_s="
                             f"{self.hop_latency_s!r}, injection_bandwidth_bytes_per_s={self.injection_bandwidth_bytes_per_s!r}")

    # ---- structure ---------------------------------------------------------------------------------
    @property
    def n_chips(self) -> int:
        """Chips in the topology: the product of its shape."""
        return math.prod(self.shape)

    @property
    def label(self) -> str:
        """Short description, e.g. ``torus 8x8x16``."""
        return f"{self.kind} {'x'.join(str(k) for k in self.shape)}"

    @property
    def _dims(self) -> tuple[int, ...]:
        return self.shape

    def ports_per_chip(self) -> int:
        """Links of the busiest chip (its injection bandwidth is shared by these). A switched chip has one
        logical port to the switch fabric."""
        if self.kind == "switched":
            return 1
        if self.kind in ("ring", "torus", "mesh"):
            return max(1, sum(2 if k >= 3 else (1 if k == 2 else 0) for k in self._dims))
        return int(_dragonfly_degrees(self.shape).max()) if self.n_chips > 1 else 1

    @property
    def link_bandwidth_bytes_per_s(self) -> float:
        """Bytes/s of one link in one direction: injection bandwidth over :meth:`ports_per_chip`."""
        return self.injection_bandwidth_bytes_per_s / self.ports_per_chip()

    def diameter_hops(self) -> int:
        """Longest shortest path between two chips, in hops (0 for one chip). A Dragonfly's is searched on
        its graph: CostError above the limits of :func:`check_graph`."""
        if self.n_chips == 1:
            return 0
        if self.kind == "switched":
            return 1
        if self.kind in ("ring", "torus"):
            return sum(k // 2 for k in self._dims)
        if self.kind == "mesh":
            return sum(k - 1 for k in self._dims)
        return int(self.distances().max())

    def average_hops(self) -> float:
        """Mean shortest path over ordered pairs of distinct chips, in hops (0 for one chip). A Dragonfly's
        is searched on its graph: CostError above the limits of :func:`check_graph`."""
        n = self.n_chips
        if n == 1:
            return 0.0
        if self.kind == "switched":
            return 1.0
        if self.kind in ("ring", "torus"):
            return n / (n - 1) * sum((k * k // 4) / k for k in self._dims)
        if self.kind == "mesh":
            return n / (n - 1) * sum((k * k - 1) / (3 * k) for k in self._dims)
        d = self.distances()
        return float(d.sum()) / (n * (n - 1))

    def diameter_bound_hops(self) -> int:
        """The closed-form worst path: as :meth:`diameter_hops`, and for a Dragonfly of ``L`` levels
        (ignoring levels of size 1) ``2^L - 1``: one link per level up and down, plus the top link."""
        if self.kind != "dragonfly":
            return self.diameter_hops()
        levels = sum(1 for a in self.shape if a > 1)
        return 2 ** levels - 1 if levels else 0

    def bisection_bandwidth_bytes_per_s(self) -> float:
        """Bytes/s across the cut into two halves, one direction (see the module docstring)."""
        n, w = self.n_chips, self.link_bandwidth_bytes_per_s
        if n == 1:
            return 0.0
        if self.kind == "switched":
            return n / 2 * self.injection_bandwidth_bytes_per_s
        if self.kind in ("ring", "torus", "mesh"):
            k = max(self._dims)
            if k == 1:
                return 0.0
            wrap = 2 if self.kind in ("ring", "torus") and k >= 3 else 1
            return n / k * wrap * w
        top = [a for a in self.shape if a > 1][-1]
        return (top // 2) * (top - top // 2) * w

    # ---- the explicit graph -------------------------------------------------------------------------
    def edges(self) -> np.ndarray:
        """Links as an ``(E, 2)`` array of chip indices (each link once). A switched topology is the
        complete graph (every pair one hop apart). Chips are numbered in row-major order of the shape
        (first axis fastest for a Dragonfly: chip ``c1 + a1 c2 + a1 a2 c3 ...``)."""
        return _edges(self.kind, self.shape)

    def distances(self) -> np.ndarray:
        """All-pairs shortest paths in hops, an ``(N, N)`` int16 array, by breadth-first search of
        :meth:`edges` (``scipy.sparse.csgraph``). Raises CostError above :data:`MAX_GRAPH_CHIPS` chips or
        :data:`MAX_GRAPH_LINKS` links (:func:`check_graph`)."""
        return _distances(self.kind, self.shape)

    def describe(self) -> dict[str, object]:
        """One row: ``topology``, ``chips``, ``ports_per_chip``, ``diameter_hops``, ``average_hops``,
        ``hop_latency_s``, ``worst_path_latency_s`` (diameter x hop latency),
        ``injection_bandwidth_bytes_per_s``, ``link_bandwidth_bytes_per_s``,
        ``bisection_bandwidth_bytes_per_s``."""
        d = self.diameter_hops()
        return {"topology": self.label, "chips": self.n_chips, "ports_per_chip": self.ports_per_chip(),
                "diameter_hops": d, "average_hops": self.average_hops(), "hop_latency_s": self.hop_latency_s,
                "worst_path_latency_s": d * self.hop_latency_s,
                "injection_bandwidth_bytes_per_s": self.injection_bandwidth_bytes_per_s,
                "link_bandwidth_bytes_per_s": self.link_bandwidth_bytes_per_s,
                "bisection_bandwidth_bytes_per_s": self.bisection_bandwidth_bytes_per_s()}

    def with_(self, **changes) -> "Topology":
        """A copy with fields changed (``hop_latency_s=0.5e-6``)."""
        return replace(self, **changes)


# ---- constructors -----------------------------------------------------------------------------------

def topology(kind: str, shape, *, hop_latency_s: float = 0.0, injection_bandwidth_bytes_per_s: float = 0.0) -> Topology:
    """A :class:`Topology` of ``kind`` (one of :data:`KINDS`; UnknownNameError otherwise) and ``shape``
    (``"8x8x16"``, ``72``, ``(4, 8, 36)``; ValueError if malformed)."""
    return Topology(str(kind).lower(), parse_shape(shape), float(hop_latency_s), float(injection_bandwidth_bytes_per_s))


def switched(n: int, **kw) -> Topology:
    """``n`` chips on one single-stage switch (NVLink Switch)."""
    return topology("switched", (n,), **kw)


def ring(n: int, **kw) -> Topology:
    """``n`` chips in a bidirectional ring."""
    return topology("ring", (n,), **kw)


def torus(dims, **kw) -> Topology:
    """A torus with wraparound of shape ``dims`` (``(8, 8, 16)`` or ``"8x8x16"``)."""
    return topology("torus", dims, **kw)


def mesh(dims, **kw) -> Topology:
    """A grid without wraparound of shape ``dims``."""
    return topology("mesh", dims, **kw)


def dragonfly(levels, **kw) -> Topology:
    """A hierarchy of fully connected levels (``(4, 8, 36)`` is TPU 8i's Boardfly)."""
    return topology("dragonfly", levels, **kw)


def torus_shapes(n_chips: int, ndims: int = 3) -> list[tuple[tuple[int, ...], int]]:
    """Every ``ndims``-dimensional torus shape of ``n_chips`` chips (sizes in ascending order), with its
    diameter, sorted by diameter then by shape: ``[((8, 8, 16), 16), ((4, 16, 16), 18), ...]``."""
    if n_chips < 1 or ndims < 1:
        raise ValueError(f"n_chips and ndims must be positive, got {n_chips!r}, {ndims!r}")

    def factorisations(n: int, k: int, least: int) -> list[tuple[int, ...]]:
        if k == 1:
            return [(n,)] if n >= least else []
        return [(d,) + rest for d in range(least, int(round(n ** (1 / k))) + 2) if n % d == 0
                for rest in factorisations(n // d, k - 1, d)]

    shapes = factorisations(n_chips, ndims, 1)
    return sorted(((s, sum(k // 2 for k in s)) for s in shapes), key=lambda t: (t[1], t[0]))


def most_compact_torus(n_chips: int, ndims: int = 3, **kw) -> Topology:
    """The ``ndims``-D torus of ``n_chips`` chips with the smallest diameter (ties: the lexicographically
    smallest shape). For 1,024 chips in 3-D: 8 x 8 x 16, diameter 4 + 4 + 8 = 16."""
    return torus(torus_shapes(n_chips, ndims)[0][0], **kw)


# ---- graphs (cached) --------------------------------------------------------------------------------

def _dragonfly_links(levels: tuple[int, ...]) -> list[tuple[int, int]]:
    """Links of a hierarchical Dragonfly, chip ``c = c1 + a1 c2 + a1 a2 c3 + ...``."""
    n = math.prod(levels)
    out: list[tuple[int, int]] = []
    a1 = levels[0]
    for base in range(0, n, a1):  # level 1: full connection inside each unit
        out += [(base + i, base + j) for i, j in itertools.combinations(range(a1), 2)]
    size = a1  # chips per unit of the level below
    for a in levels[1:]:
        for top in range(0, n, size * a):  # each unit of this level holds `a` sub-units of `size` chips
            for u, v in itertools.combinations(range(a), 2):
                port_u = v - 1  # index of v among u's siblings (v > u)
                port_v = u      # index of u among v's siblings (u < v)
                out.append((top + u * size + port_u % size, top + v * size + port_v % size))
        size *= a
    return out


@functools.lru_cache(maxsize=64)
def _dragonfly_degrees(levels: tuple[int, ...]) -> np.ndarray:
    check_graph("dragonfly", levels)
    e = np.asarray(_dragonfly_links(levels), dtype=np.int64).reshape(-1, 2)
    out = np.bincount(e.ravel(), minlength=math.prod(levels))
    out.setflags(write=False)  # kept: shared by every caller
    return out


@functools.lru_cache(maxsize=64)
def _edges(kind: str, shape: tuple[int, ...]) -> np.ndarray:
    n = math.prod(shape)
    check_graph(kind, shape)
    if kind == "switched":
        pairs = list(itertools.combinations(range(n), 2))
    elif kind == "dragonfly":
        pairs = _dragonfly_links(shape)
    else:
        wrap = kind in ("ring", "torus")
        idx = np.arange(n).reshape(shape)
        pairs = []
        for axis, k in enumerate(shape):
            if k == 1:
                continue
            nxt = np.roll(idx, -1, axis=axis)
            a, b = idx.ravel(), nxt.ravel()
            if not wrap or k == 2:  # drop the wraparound links (for k = 2 it duplicates the direct one)
                keep = (np.indices(shape)[axis].ravel() != k - 1)
                a, b = a[keep], b[keep]
            pairs += list(zip(a.tolist(), b.tolist()))
    arr = np.asarray(sorted({(min(a, b), max(a, b)) for a, b in pairs}), dtype=np.int64)
    arr = arr.reshape(-1, 2)
    arr.setflags(write=False)
    return arr


@functools.lru_cache(maxsize=16)
def _distances(kind: str, shape: tuple[int, ...]) -> np.ndarray:
    e = _edges(kind, shape)  # CostError above the limits (check_graph) before SciPy is imported
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import shortest_path

    n = math.prod(shape)
    g = coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n)).tocsr()
    d = shortest_path(g, method="D", directed=False, unweighted=True)
    if np.isinf(d).any():
        raise ValueError(f"{kind} {shape}: the graph is not connected")
    out = d.astype(np.int16)
    out.setflags(write=False)
    return out


# ---- collectives (alpha-beta) ------------------------------------------------------------------------

def _check_bytes(name: str, value) -> np.ndarray:
    v = np.asarray(value, dtype=float)
    if v.size and not (v.min() >= 0 and v.max() < math.inf):  # NaN fails both comparisons
        raise ValueError(f"{name} must be finite and non-negative bytes, got {value!r}")
    return v


def _bandwidth(topo: Topology, what: str) -> float:
    w = topo.injection_bandwidth_bytes_per_s
    if w <= 0:
        raise ValueError(f"{topo.label}: injection_bandwidth_bytes_per_s must be positive to time a {what}, got {w!r}")
    return w


def _out(x):
    return float(x) if np.ndim(x) == 0 else x


def point_to_point_s(topo: Topology, message_bytes, *, hops: int | None = None):
    """One message of ``message_bytes`` (scalar or array) over one path of ``hops`` hops (default: the
    diameter, the worst pair), cut-through: ``hops x hop_latency + bytes / link bandwidth`` (s)."""
    m = _check_bytes("message_bytes", message_bytes)
    hops = topo.diameter_hops() if hops is None else hops
    if hops < 0:
        raise ValueError(f"hops must be non-negative, got {hops!r}")
    _bandwidth(topo, "point-to-point message")
    return _out(hops * topo.hop_latency_s + m / topo.link_bandwidth_bytes_per_s)


def pipeline_handoff_s(topo: Topology, message_bytes, *, hops: int = 1):
    """Hand-off of ``message_bytes`` of activations from one pipeline stage to the next, placed ``hops``
    hops apart (default neighbours): :func:`point_to_point_s` (s)."""
    return point_to_point_s(topo, message_bytes, hops=hops)


ALGORITHMS = ("direct", "ring")


def all_reduce_s(topo: Topology, message_bytes, *, algorithm: str = "direct", alpha0_s: float = 0.0):
    """All-reduce of ``message_bytes`` (each chip's full vector; scalar or array) over all chips of
    ``topo`` (s): ``alpha0 + latency + 2 (N-1)/N x M / W``, latency ``2 D h`` (``direct``: reduce-scatter
    and all-gather each cross the diameter once) or ``2 (N-1) h`` (``ring``: N-1 neighbour steps each).
    Raises UnknownNameError for another algorithm."""
    if algorithm not in ALGORITHMS:
        raise UnknownNameError("all-reduce algorithm", algorithm, list(ALGORITHMS))
    m = _check_bytes("message_bytes", message_bytes)
    n = topo.n_chips
    if n == 1:
        return _out(0.0 * m)
    w = _bandwidth(topo, "all-reduce")
    steps = topo.diameter_hops() if algorithm == "direct" else n - 1
    return _out(alpha0_s + 2 * steps * topo.hop_latency_s + 2 * (n - 1) / n * m / w)


def all_to_all_s(topo: Topology, bytes_out_per_chip, *, alpha0_s: float = 0.0, include_latency: bool = True):
    """All-to-all in which each chip sends ``bytes_out_per_chip`` (scalar or array; the bytes that leave
    it, spread over the other chips) (s): ``alpha0 + D h + M_out x max(1, H) / W`` (hop-bytes bound: every
    byte crosses H links on average, each chip's links carry W in total). ``include_latency=False`` keeps
    only the bandwidth term (DeepSeek's arithmetic)."""
    m = _check_bytes("bytes_out_per_chip", bytes_out_per_chip)
    if topo.n_chips == 1:
        return _out(0.0 * m)
    w = _bandwidth(topo, "all-to-all")
    lat = alpha0_s + topo.diameter_hops() * topo.hop_latency_s if include_latency else 0.0
    return _out(lat + m * max(1.0, topo.average_hops()) / w)


# ---- MoE expert-parallel all-to-all (DeepSeek-V3, arXiv 2505.09343 section 2.3) -----------------------

def moe_all_to_all_bytes(tokens_per_chip, experts_per_token: float, hidden_size: int, *, dispatch_bytes: float = 1.0,
                         combine_bytes: float = 2.0, remote_fraction: float = 1.0):
    """Bytes one chip sends in one MoE layer's dispatch plus combine: ``tokens x experts x hidden x
    (dispatch + combine bytes) x remote_fraction`` (FP8 dispatch, BF16 combine by default;
    ``remote_fraction`` = (N-1)/N when experts are spread evenly over N chips, 1 in DeepSeek's bound)."""
    t = _check_bytes("tokens_per_chip", tokens_per_chip)
    if experts_per_token <= 0 or hidden_size <= 0 or not 0 <= remote_fraction <= 1:
        raise ValueError(f"experts_per_token and hidden_size must be positive and remote_fraction in [0, 1], got "
                         f"{experts_per_token!r}, {hidden_size!r}, {remote_fraction!r}")
    return _out(t * experts_per_token * hidden_size * (dispatch_bytes + combine_bytes) * remote_fraction)


def ep_decode_comm_bound(topo: Topology, *, tokens_per_chip, experts_per_token: float, hidden_size: int, layers: int,
                         micro_batches: int = 2, include_latency: bool = False, **bytes_kw) -> dict[str, object]:
    """Decode speed allowed by the expert-parallel all-to-all alone (DeepSeek-V3's bound, arXiv 2505.09343
    section 2.3): per layer :func:`all_to_all_s` of :func:`moe_all_to_all_bytes`; with ``micro_batches``
    micro-batches overlapping compute a layer costs ``micro_batches`` times that; TPOT = that x ``layers``.

    Returns ``bytes_per_layer``, ``per_layer_s``, ``per_layer_overlapped_s``, ``tpot_s``,
    ``tok_s_user`` (= 1 / TPOT). 32 tokens, 9 experts, D = 7,000, 61 layers at 50 GB/s: 120.96 us per
    layer, 14.76 ms, 67.8 tok/s."""
    b = moe_all_to_all_bytes(tokens_per_chip, experts_per_token, hidden_size, **bytes_kw)
    per_layer = all_to_all_s(topo, b, include_latency=include_latency)
    tpot = np.asarray(per_layer) * micro_batches * layers
    return {"bytes_per_layer": b, "per_layer_s": per_layer, "per_layer_overlapped_s": _out(np.asarray(per_layer) * micro_batches),
            "tpot_s": _out(tpot), "tok_s_user": _out(1.0 / tpot)}


# ---- tables ------------------------------------------------------------------------------------------

def size_sweep(kinds=("switched", "ring", "torus2d", "torus3d", "dragonfly"), sizes=(8, 16, 32, 64, 128, 256, 512, 1024),
               *, dragonfly_levels: tuple[int, int] = (4, 8)) -> "pl.DataFrame":
    """Diameter and average hop count of each topology family at each size: ``family``, ``chips``,
    ``shape``, ``diameter_hops``, ``average_hops``. ``torus2d``/``torus3d`` use :func:`most_compact_torus`;
    ``dragonfly`` adds levels of ``dragonfly_levels`` (Boardfly's 4 chips a board, 8 boards a group) and a
    top level of ``size / (a1 a2)`` groups (sizes that do not divide are left out)."""
    import polars as pl

    rows = []
    for fam in kinds:
        for n in sizes:
            if fam == "switched":
                t = switched(n)
            elif fam == "ring":
                t = ring(n)
            elif fam in ("torus2d", "torus3d"):
                t = most_compact_torus(n, 2 if fam == "torus2d" else 3)
            elif fam == "dragonfly":
                a1, a2 = dragonfly_levels
                if n % (a1 * a2) or n < a1 * a2:
                    continue
                t = dragonfly((a1, a2, n // (a1 * a2))) if n > a1 * a2 else dragonfly((a1, a2))
            else:
                raise UnknownNameError("topology family", fam, ["switched", "ring", "torus2d", "torus3d", "dragonfly"])
            rows.append({"family": fam, "chips": n, "shape": "x".join(map(str, t.shape)),
                         "diameter_hops": t.diameter_hops(), "average_hops": t.average_hops()})
    return pl.DataFrame(rows)


def collective_table(topo: Topology, *, hidden_size: int, decode_tokens: int = 1, prefill_tokens: int = 8192,
                     bytes_per_value: float = 2.0, experts_per_token: float = 8.0) -> "pl.DataFrame":
    """Time of each collective on ``topo`` for a decode-sized and a prefill-sized message: the activations
    of ``decode_tokens`` or ``prefill_tokens`` tokens of ``hidden_size`` values at ``bytes_per_value``.
    Rows: ``phase`` (decode / prefill), ``collective`` (all-reduce, all-to-all (MoE dispatch + combine of
    ``experts_per_token`` copies, FP8 + BF16), pipeline hand-off), ``message_bytes``, ``time_s``,
    ``latency_s`` (the part that does not depend on the bytes), ``latency_bound`` (latency >= half)."""
    import polars as pl

    zero = topo.with_(injection_bandwidth_bytes_per_s=topo.injection_bandwidth_bytes_per_s or 1.0)
    rows = []
    for phase, tokens in (("decode", decode_tokens), ("prefill", prefill_tokens)):
        act = tokens * hidden_size * bytes_per_value
        a2a = moe_all_to_all_bytes(tokens, experts_per_token, hidden_size,
                                   remote_fraction=(topo.n_chips - 1) / topo.n_chips if topo.n_chips > 1 else 0.0)
        for name, fn, msg in (("all-reduce", lambda t, m: all_reduce_s(t, m), act),
                              ("all-to-all", lambda t, m: all_to_all_s(t, m), a2a),
                              ("pipeline hand-off", lambda t, m: pipeline_handoff_s(t, m), act)):
            total = fn(topo, msg)
            lat = fn(zero, 0.0)
            rows.append({"phase": phase, "collective": name, "message_bytes": float(msg), "time_s": float(total),
                         "latency_s": float(lat), "latency_bound": bool(lat >= total / 2)})
    return pl.DataFrame(rows)


def message_sweep(topologies: dict[str, Topology], sizes=None) -> "pl.DataFrame":
    """Time of each collective against message size on each named topology: ``system``, ``collective``
    (``all-reduce``, ``all-to-all``, ``pipeline hand-off``), ``message_bytes`` (default 100 B to 1 GB, four
    points a decade), ``time_s``. The all-to-all sends the whole message out of each chip."""
    import polars as pl

    m = np.geomspace(1e2, 1e9, 29) if sizes is None else np.asarray(sizes, dtype=float)
    frames = []
    for name, t in topologies.items():
        for coll, times in (("all-reduce", all_reduce_s(t, m)), ("all-to-all", all_to_all_s(t, m)),
                            ("pipeline hand-off", pipeline_handoff_s(t, m))):
            frames.append(pl.DataFrame({"system": [name] * m.size, "collective": [coll] * m.size,
                                        "message_bytes": m, "time_s": np.asarray(times, dtype=float)}))
    return pl.concat(frames)


#: DeepSeek's worked bound on expert-parallel decode (arXiv 2505.09343, section 2.3): 32 tokens per device,
#: 8 routed + 1 shared expert per token, hidden size about 7K (7,000 in the paper's arithmetic; the model's
#: is 7,168), FP8 dispatch and BF16 combine, 61 layers, two micro-batches, one 400 Gb/s InfiniBand NIC
#: (50 GB/s) per GPU, and NVL72's 900 GB/s per GPU (NVLink 5, one direction) for comparison.
DEEPSEEK_EP_EXAMPLE = {"tokens_per_chip": 32, "experts_per_token": 9, "hidden_size": 7000, "layers": 61,
                       "micro_batches": 2, "infiniband_bytes_per_s": 50e9, "nvlink_bytes_per_s": 900e9}


def deepseek_ep_example(*, hidden_size: int | None = None, bandwidth_bytes_per_s: float | None = None) -> dict[str, object]:
    """:func:`ep_decode_comm_bound` on DeepSeek's example (:data:`DEEPSEEK_EP_EXAMPLE`) over a switched
    network of the given per-chip bandwidth (default the InfiniBand one), bandwidth term only as in the
    paper. 120.96 us per layer, 14.76 ms TPOT, 67.8 tok/s; at 900 GB/s about 1,220 tok/s."""
    ex = DEEPSEEK_EP_EXAMPLE
    topo = switched(2, injection_bandwidth_bytes_per_s=bandwidth_bytes_per_s or ex["infiniband_bytes_per_s"])
    return ep_decode_comm_bound(topo, tokens_per_chip=ex["tokens_per_chip"], experts_per_token=ex["experts_per_token"],
                                hidden_size=hidden_size or ex["hidden_size"], layers=ex["layers"],
                                micro_batches=ex["micro_batches"])
