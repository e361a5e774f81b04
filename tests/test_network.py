"""Topologies and collectives: hop counts against hand-worked cases and breadth-first search, the
alpha-beta formulas, and DeepSeek-V3's all-to-all arithmetic (golden case 4)."""

import numpy as np
import pytest

import jalapeno as jp
from jalapeno import network as nw


# ---- hop counts -------------------------------------------------------------------------------------

@pytest.mark.parametrize("n, diameter, average", [
    (8, 4, (1 + 2 + 3 + 4 + 3 + 2 + 1) / 7),   # bidirectional ring: distances to the 7 others
    (7, 3, (1 + 2 + 3 + 3 + 2 + 1) / 6),
    (2, 1, 1.0),
])
def test_ring_hand_worked(n, diameter, average):
    t = nw.ring(n)
    assert t.diameter_hops() == diameter
    assert t.average_hops() == pytest.approx(average)


def test_torus_4x4_and_8x8x16_hand_worked():
    t = nw.torus((4, 4))
    assert t.diameter_hops() == 2 + 2
    # per axis, ring distances 0,1,2,1 average 1 over all 4 positions; two axes, excluding the chip itself
    assert t.average_hops() == pytest.approx(2 * 1.0 * 16 / 15)
    big = nw.torus("8x8x16")
    assert big.n_chips == 1024
    assert big.diameter_hops() == 4 + 4 + 8 == 16
    assert big.average_hops() == pytest.approx((2 + 2 + 4) * 1024 / 1023)
    assert big.ports_per_chip() == 6


def test_mesh_has_no_wraparound():
    t = nw.mesh((3, 4))
    assert t.diameter_hops() == 2 + 3
    d = t.distances()
    assert int(d[0, 11]) == 5  # opposite corners


@pytest.mark.parametrize("topo", [nw.ring(9), nw.ring(12), nw.torus((3, 5)), nw.torus((4, 4, 4)), nw.torus((2, 6)),
                                  nw.mesh((4, 5)), nw.mesh((2, 3, 4)), nw.torus((8, 8, 16))])
def test_closed_forms_match_breadth_first_search(topo):
    d = topo.distances()
    n = topo.n_chips
    assert topo.diameter_hops() == int(d.max())
    assert topo.average_hops() == pytest.approx(d.sum() / (n * (n - 1)))


def test_small_dragonfly_graph_by_hand():
    # 3 units of 2 chips: units fully connected inside; one link per pair of units, attached round-robin
    t = nw.dragonfly((2, 3))
    edges = {tuple(e) for e in t.edges().tolist()}
    assert edges == {(0, 1), (2, 3), (4, 5), (0, 2), (1, 4), (3, 5)}
    assert t.diameter_hops() == 3 == t.diameter_bound_hops()  # e.g. 0 -> 1 -> 4 -> 5
    assert int(t.distances()[0, 5]) == 3


def test_boardfly_is_seven_hops_for_the_pod_and_for_1024_chips():
    pod = nw.dragonfly((4, 8, 36))
    assert pod.n_chips == 1152
    assert pod.diameter_hops() == 7 == pod.diameter_bound_hops() == 2 ** 3 - 1
    assert nw.dragonfly((4, 8, 32)).diameter_hops() == 7
    assert nw.dragonfly((4, 8)).diameter_hops() == 3
    assert 1 < pod.average_hops() < 7


def test_most_compact_torus_of_1024_chips_is_8x8x16_with_16_hops():
    shapes = nw.torus_shapes(1024)
    assert shapes[0] == ((8, 8, 16), 16)
    assert shapes[1] == ((4, 16, 16), 18)
    assert all(d >= 16 for _, d in shapes)
    assert nw.most_compact_torus(1024).shape == (8, 8, 16)
    assert nw.most_compact_torus(64, 2).shape == (8, 8)


def test_switched_domain():
    t = nw.switched(72, hop_latency_s=1e-6, injection_bandwidth_bytes_per_s=900e9)
    assert t.diameter_hops() == 1 and t.average_hops() == 1.0
    assert t.bisection_bandwidth_bytes_per_s() == pytest.approx(36 * 900e9)
    assert t.link_bandwidth_bytes_per_s == pytest.approx(900e9)


def test_bisection_of_a_torus_counts_the_wraparound():
    t = nw.torus((4, 8), injection_bandwidth_bytes_per_s=400e9)  # 4 ports of 100 GB/s
    assert t.link_bandwidth_bytes_per_s == pytest.approx(100e9)
    assert t.bisection_bandwidth_bytes_per_s() == pytest.approx(4 * 2 * 100e9)  # cut across the 8-axis: 2 planes of 4


def test_size_sweep():
    s = nw.size_sweep(sizes=(64, 1024))
    get = lambda fam, n: s.filter((s["family"] == fam) & (s["chips"] == n)).row(0, named=True)
    assert get("torus3d", 1024)["diameter_hops"] == 16
    assert get("dragonfly", 1024)["diameter_hops"] == 7
    assert get("ring", 64)["diameter_hops"] == 32
    assert get("switched", 1024)["diameter_hops"] == 1


# ---- collectives (alpha-beta) ----------------------------------------------------------------------------

def test_all_reduce_direct_and_ring_hand_worked():
    t = nw.torus((4, 4), hop_latency_s=1e-6, injection_bandwidth_bytes_per_s=100e9)
    m = 1e6
    bw = 2 * 15 / 16 * m / 100e9  # 18.75 us
    assert nw.all_reduce_s(t, m) == pytest.approx(2 * 4 * 1e-6 + bw)
    assert nw.all_reduce_s(t, m, algorithm="ring") == pytest.approx(2 * 15 * 1e-6 + bw)
    assert nw.all_reduce_s(t, m, alpha0_s=5e-6) == pytest.approx(5e-6 + 8e-6 + bw)
    sizes = np.array([0.0, 1e6])
    np.testing.assert_allclose(nw.all_reduce_s(t, sizes), [8e-6, 8e-6 + bw])


def test_all_to_all_pays_average_hops_in_bandwidth():
    t = nw.torus((4, 4), hop_latency_s=1e-6, injection_bandwidth_bytes_per_s=100e9)
    assert nw.all_to_all_s(t, 1e6) == pytest.approx(4e-6 + 1e6 * (32 / 15) / 100e9)
    s = nw.switched(16, hop_latency_s=1e-6, injection_bandwidth_bytes_per_s=100e9)
    assert nw.all_to_all_s(s, 1e6) == pytest.approx(1e-6 + 1e6 / 100e9)
    assert nw.all_to_all_s(s, 1e6, include_latency=False) == pytest.approx(1e6 / 100e9)


def test_point_to_point_and_pipeline_handoff():
    t = nw.ring(8, hop_latency_s=0.5e-6, injection_bandwidth_bytes_per_s=200e9)  # 2 ports of 100 GB/s
    assert nw.point_to_point_s(t, 1e4) == pytest.approx(4 * 0.5e-6 + 1e4 / 100e9)
    assert nw.point_to_point_s(t, 1e4, hops=2) == pytest.approx(1e-6 + 1e4 / 100e9)
    assert nw.pipeline_handoff_s(t, 1e4) == pytest.approx(0.5e-6 + 1e4 / 100e9)


def test_one_chip_needs_no_collective():
    t = nw.switched(1, injection_bandwidth_bytes_per_s=1e9)
    assert nw.all_reduce_s(t, 1e6) == 0.0 and nw.all_to_all_s(t, 1e6) == 0.0


def test_decode_messages_are_latency_bound_and_prefill_messages_are_not():
    t = nw.switched(72, hop_latency_s=1e-6, injection_bandwidth_bytes_per_s=900e9)
    ct = nw.collective_table(t, hidden_size=7168, decode_tokens=1, prefill_tokens=8192)
    ar = {r["phase"]: r for r in ct.filter(ct["collective"] == "all-reduce").iter_rows(named=True)}
    assert ar["decode"]["latency_bound"] and not ar["prefill"]["latency_bound"]
    assert ar["decode"]["message_bytes"] == 7168 * 2
    assert ar["prefill"]["time_s"] == pytest.approx(2e-6 + 2 * 71 / 72 * 8192 * 7168 * 2 / 900e9)


def test_message_sweep_grows_with_size():
    df = nw.message_sweep({"torus": nw.torus((4, 4), hop_latency_s=1e-6, injection_bandwidth_bytes_per_s=1e11)})
    for coll in ("all-reduce", "all-to-all", "pipeline hand-off"):
        t = df.filter(df["collective"] == coll)["time_s"].to_numpy()
        assert np.all(np.diff(t) > 0)


# ---- golden case 4: DeepSeek-V3's expert-parallel all-to-all ---------------------------------------------

def test_deepseek_all_to_all_golden_case_4():
    r = nw.deepseek_ep_example()
    assert r["bytes_per_layer"] == 3 * 32 * 9 * 7000
    assert r["per_layer_s"] * 1e6 == pytest.approx(120.96, rel=0.005)
    assert r["per_layer_overlapped_s"] * 1e6 == pytest.approx(241.92, rel=0.005)
    assert r["tpot_s"] * 1e3 == pytest.approx(14.76, rel=0.005)
    assert r["tok_s_user"] == pytest.approx(67.8, rel=0.005)
    nvl = nw.deepseek_ep_example(bandwidth_bytes_per_s=900e9)
    assert nvl["per_layer_s"] * 1e6 == pytest.approx(6.72, rel=0.005)
    assert nvl["tpot_s"] * 1e3 == pytest.approx(0.820, rel=0.005)
    assert nvl["tok_s_user"] == pytest.approx(1220, rel=0.005)
    real = nw.deepseek_ep_example(hidden_size=jp.model("deepseek-r1").hidden_size)
    assert real["per_layer_s"] * 1e6 == pytest.approx(123.9, rel=0.005)
    assert real["tok_s_user"] == pytest.approx(66.2, rel=0.005)


def test_moe_bytes_remote_fraction():
    assert nw.moe_all_to_all_bytes(4, 8, 1000, remote_fraction=0.5) == 4 * 8 * 1000 * 3 * 0.5


# ---- bad input ------------------------------------------------------------------------------------------

def test_unknown_topology_lists_the_kinds():
    with pytest.raises(jp.UnknownNameError, match="unknown topology 'hypercube'.*switched, ring, torus, mesh, dragonfly"):
        nw.topology("hypercube", 8)


@pytest.mark.parametrize("shape", ["8xx8", "0x4", (2.5, 4), "abc", ()])
def test_bad_shape_is_refused(shape):
    with pytest.raises(ValueError, match="shape must be positive integers"):
        nw.torus(shape)


def test_bad_messages_and_bandwidths_are_refused():
    t = nw.torus((4, 4), injection_bandwidth_bytes_per_s=1e11)
    with pytest.raises(ValueError, match="message_bytes must be finite and non-negative"):
        nw.all_reduce_s(t, -1.0)
    with pytest.raises(ValueError, match="injection_bandwidth_bytes_per_s must be positive"):
        nw.all_to_all_s(nw.torus((4, 4)), 1e3)
    with pytest.raises(jp.UnknownNameError, match="unknown all-reduce algorithm 'tree'"):
        nw.all_reduce_s(t, 1e3, algorithm="tree")
    with pytest.raises(ValueError, match="a switched topology takes one size"):
        nw.topology("switched", (8, 8))
