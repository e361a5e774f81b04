"""Diagrams of fabrics (jalapeno.diagrams.drawing): drawn from the topology's own graph, so a drawn link is
a link of the graph and a chip's colour is its breadth-first-search distance."""

import pytest

from jalapeno import diagrams, network


def _chips(d):
    return d["nodes"].filter(d["nodes"]["role"].is_in(["chip", "reference chip"]))


@pytest.mark.parametrize("topo", [network.torus((4, 4, 4)), network.torus((8, 8, 16)), network.mesh((3, 5)),
                                  network.dragonfly((4, 8, 6)), network.dragonfly((8, 32)), network.ring(9),
                                  network.switched(72)], ids=lambda t: t.label)
def test_hops_are_the_graphs_distances_and_the_reference_is_ringed(topo):
    d = diagrams.drawing(topo)
    chips = _chips(d)
    dist = topo.distances()[0]
    assert chips["hops"].to_list() == [int(dist[c]) for c in chips["node"]]
    assert chips.filter(chips["role"] == "reference chip")["node"].to_list() == [0]


def test_a_torus_plane_is_a_grid_with_wraparound_stubs_and_the_third_axis_noted():
    # 8 x 8 x 16: the plane of the two last axes has 8 x 16 = 128 chips, 8 x 15 + 7 x 16 = 232 grid links
    # and 8 + 16 = 24 wraparound links (a stub at each end: 48 stubs)
    t = network.torus((8, 8, 16))
    d = diagrams.drawing(t)
    kinds = d["links"]["kind"].value_counts().sort("kind").rows()
    assert _chips(d).height == 128 and kinds == [("link", 232), ("wraparound", 48)]
    assert any("one of 8 planes" in n for n in d["notes"])
    # in the plane the farthest chip is 4 + 8 = 12 hops away; the diameter adds the third axis's 4
    assert _chips(d)["hops"].max() == 12 and t.diameter_hops() == 16


def test_every_drawn_link_of_a_dragonfly_unit_is_a_link_of_the_graph():
    t = network.dragonfly((4, 8, 36))  # TPU 8i's Boardfly pod
    d = diagrams.drawing(t)
    unit = d["nodes"].filter(d["nodes"]["panel"] == "one unit")
    pos = {(round(r["x"], 9), round(r["y"], 9)): r["node"] for r in unit.iter_rows(named=True)}
    edges = {tuple(e) for e in t.edges().tolist()}
    drawn = d["links"].filter(d["links"]["panel"] == "one unit")
    for r in drawn.iter_rows(named=True):
        a, b = pos[(round(r["x"], 9), round(r["y"], 9))], pos[(round(r["x2"], 9), round(r["y2"], 9))]
        assert (min(a, b), max(a, b)) in edges
    # one unit: 8 boards of 4 chips fully connected (6 links each) plus one link per pair of boards (28)
    assert drawn["kind"].value_counts().sort("kind").rows() == [("level 1", 48), ("level 2", 28)]
    # the top level: 36 groups, one link per pair; a group's colour is its farthest chip, up to the diameter
    groups = d["nodes"].filter(d["nodes"]["panel"] == "all units")
    assert groups.height == 36 and d["links"].filter(d["links"]["panel"] == "all units").height == 36 * 35 // 2
    assert groups["hops"].max() == int(t.distances()[0].max())


def test_a_switched_domain_is_a_star_one_hop_across():
    d = diagrams.drawing(network.switched(72))
    assert d["links"].height == 72 and set(d["links"]["kind"]) == {"switch link"}
    assert d["nodes"].filter(d["nodes"]["role"] == "switch").height == 1
    assert sorted(set(_chips(d)["hops"].to_list())) == [0, 1]


def test_a_large_dragonfly_draws_only_one_units_links():
    d = diagrams.drawing(network.dragonfly((4, 8, 100)))
    assert d["links"].filter(d["links"]["panel"] == "all units").height == 99
    assert any("links of one unit shown" in n for n in d["notes"])


def test_a_bad_reference_is_refused():
    with pytest.raises(ValueError, match="reference must be a chip index in \\[0, 72\\), got 72"):
        diagrams.drawing(network.switched(72), reference=72)
