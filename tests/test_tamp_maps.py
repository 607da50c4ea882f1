"""TAMP map generators (seeded sizes, connectivity, blockers) and spark-dsg import/export."""

from __future__ import annotations

import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from servicerobot.errors import DependencyNotInstalled, SceneError
from servicerobot.planners.tamp import DiscChecker
from servicerobot.planners.tamp.context import TampContext
from servicerobot.scenes.tamp_maps import alley, block_roads, city, grid, make_map, mark_suspicious, office

SHARED = Path(__file__).resolve().parents[2] / "shared"
HYDRA = SHARED / "fixtures" / "hydra" / "apartment_dsg.json"


@pytest.fixture(scope="module")
def big_city():
    return city(0)


def _check_consistent(m) -> None:
    assert nx.is_connected(m.graph)
    assert m.start in m.places
    assert all(p.region in m.regions for p in m.places.values())
    assert all(o.place in m.places for o in m.objects.values())
    for p in m.places.values():
        assert len(p.polygon) == 4 and p.contains(p.centre)


@pytest.mark.parametrize(("make", "places", "objects"), [(alley, (12, 12), (1, 1)), (grid, (100, 100), (6, 6)),
                                                          (office, (500, 620), (28, 28))])
def test_small_maps_have_the_advertised_sizes(make, places, objects):
    for seed in (0, 1):
        m = make(seed)
        assert places[0] <= len(m.places) <= places[1]
        assert objects[0] <= len(m.objects) <= objects[1]
        _check_consistent(m)


def test_alley_is_two_by_six_with_eight_connectivity():
    m = alley(0)
    assert {n for n in m.places} == {f"p{r}_{c}" for r in range(2) for c in range(6)}
    assert len(m.edges) == 10 + 6 + 10  # along, across, diagonals
    assert m.graph.has_edge("p0_0", "p1_1") and not m.graph.has_edge("p0_0", "p0_2")


def test_office_has_rooms_and_corridors_joined_by_doors():
    m = office(0)
    kinds = {r.kind for r in m.regions.values()}
    assert kinds == {"room", "corridor"}
    rooms = [r for r in m.regions.values() if r.kind == "room"]
    assert len(rooms) >= 10
    for room in rooms:  # every room is entered from outside it through at least one door edge
        inside = set(m.places_in(room.name))
        assert any(a in inside and b not in inside for a, b in m.graph.edges(inside))


def test_city_has_paper_scale(big_city):
    assert 17_000 <= len(big_city.places) <= 18_500
    assert len(big_city.objects) == 1300
    _check_consistent(big_city)
    ctx = TampContext(big_city)
    # objects stand beside the roads: none covers a place centre
    assert all(not ctx.footprint(o).occupied for o in list(big_city.objects)[:200])


@pytest.mark.parametrize("make", [alley, grid, office])
def test_generators_are_seeded(make):
    a, b, c = make(3), make(3), make(4)
    assert a.places == b.places and a.edges == b.edges and a.objects == b.objects
    assert a.objects != c.objects


def test_city_is_seeded(big_city):
    small = {"n_objects": 100, "blocks": (3, 2), "block_cells": (30, 40)}
    assert city(5, **small).objects == city(5, **small).objects
    assert city(5, **small).objects != city(6, **small).objects


def test_mark_suspicious_flags_exactly_n_more():
    m = office(0)
    before = len(m.suspicious())
    assert len(mark_suspicious(m, 5, seed=1).suspicious()) == before + 5
    with pytest.raises(SceneError, match="cannot mark"):
        mark_suspicious(m, 1000, seed=1)


def test_block_roads_closes_each_road_until_inspected(big_city):
    m = block_roads(big_city, 13, seed=0)
    blockers = [o for o in m.objects if o.startswith("blocker")]
    assert len(blockers) == 13 and all(m.objects[o].suspicious for o in blockers)
    ctx = TampContext(m)
    for name in blockers:
        fp = ctx.footprint(name)
        road = m.places[m.objects[name].place].region
        cells = set(m.places_in(road))
        taken = {ctx.names[i] for i in fp.blocked | fp.occupied}
        closed = m.graph.subgraph(cells - taken)
        opened = m.graph.subgraph(cells - {ctx.names[i] for i in fp.occupied})
        assert nx.number_connected_components(closed) == 2  # the road is cut in two while suspicious
        assert nx.is_connected(opened)  # and passable once inspected
        assert fp.approach is not None


def test_blockers_leave_no_gap_for_the_robot_disc(big_city):
    m = block_roads(big_city, 13, seed=0)
    checker = DiscChecker(m)
    cell, rr = m.metadata["cell"], m.metadata["robot_radius"]
    for name in (o for o in m.objects if o.startswith("blocker")):
        x, y = m.objects[name].position
        region = m.places[m.objects[name].place].region
        horizontal = {p.centre[1] for p in m.places.values() if p.region == region} == {y - cell, y, y + cell}
        free_half = 1.5 * cell - rr  # the robot centre stays this close to the middle of a 3-lane road
        for off in np.linspace(-free_half, free_half, 13):  # every lane position is closed while suspicious
            a, b = ((x - 3, y + off), (x + 3, y + off)) if horizontal else ((x + off, y - 3), (x + off, y + 3))
            assert name in checker.blocking(a, b)
        checker.set_inspected([name])
        for off in (-cell, cell):  # and both side lanes open once it is inspected
            a, b = ((x - 3, y + off), (x + 3, y + off)) if horizontal else ((x + off, y - 3), (x + off, y + 3))
            assert name not in checker.blocking(a, b)
        checker.set_inspected([])


def test_block_roads_needs_roads():
    with pytest.raises(SceneError, match="road"):
        block_roads(grid(0), 1, seed=0)


def test_make_map_rejects_unknown_names():
    assert make_map("alley", 0).name == "alley"
    with pytest.raises(SceneError, match="known: alley"):
        make_map("castle")


# --- spark-dsg ------------------------------------------------------------------------------------------


def test_missing_spark_dsg_names_the_extra(monkeypatch):
    from servicerobot.scenes import dsg_io

    monkeypatch.setitem(sys.modules, "spark_dsg", None)
    with pytest.raises(DependencyNotInstalled, match=r"servicerobot\[dsg\]"):
        dsg_io.to_spark_dsg(alley(0))


@pytest.mark.parametrize("make", [alley, office])
def test_spark_dsg_round_trip(make, tmp_path):
    pytest.importorskip("spark_dsg", reason="spark-dsg (the 'dsg' extra) is not installed")
    from servicerobot.scenes.dsg_io import load_dsg, save_dsg

    m = mark_suspicious(make(0), 0)
    back = load_dsg(save_dsg(m, tmp_path / "map.json"))
    assert back.name == m.name and back.start == m.start and back.inflation == m.inflation
    assert back.places == m.places
    assert {frozenset(e) for e in back.edges} == {frozenset(e) for e in m.edges}
    assert back.objects == m.objects
    assert back.regions == m.regions
    assert back.metadata == m.metadata


def test_load_dsg_reports_a_missing_file(tmp_path):
    from servicerobot.scenes.dsg_io import load_dsg

    with pytest.raises(SceneError, match="no scene graph file"):
        load_dsg(tmp_path / "nothing.json")


def test_hydra_apartment_fixture_loads():
    pytest.importorskip("spark_dsg", reason="spark-dsg (the 'dsg' extra) is not installed")
    if not HYDRA.is_file():
        pytest.skip(f"shared fixtures are absent ({HYDRA})")
    from servicerobot.scenes.dsg_io import load_dsg

    m = load_dsg(HYDRA)
    assert len(m.places) == 185 and len(m.objects) == 7
    assert nx.number_connected_components(m.graph) == 2
    assert set(m.regions) == {"R0", "unassigned"}  # 50 places have no room parent
    assert len(m.places_in("R0")) == 135
    for p in m.places.values():  # 3D places without boundaries get squares around their x-y position
        assert len(p.polygon) == 4 and p.contains(p.centre)
    assert all(o.place in m.places and o.radius > 0 for o in m.objects.values())
    assert m.start in max(nx.connected_components(m.graph), key=len)
