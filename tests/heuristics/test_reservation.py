"""A reservation keeps a list scheduler's device choices completable."""

import pytest

from schedkit import Problem
from schedkit.heuristics.reservation import Reservation

#: Two devices of memory 4; x and y (2 each) must share one so that z (4) gets the other.
TIGHT = {"devices": [{"name": "a", "memory": 4}, {"name": "b", "memory": 4}],
         "tasks": [{"name": "x", "work": 1, "memory": 2},
                   {"name": "y", "work": 1, "memory": 2},
                   {"name": "z", "work": 1, "memory": 4}]}


@pytest.mark.parametrize("pick", [min, max])
def test_every_offered_device_leaves_room_for_the_rest(pick):
    p = Problem.from_dict(TIGHT)
    r = Reservation(p, "test")
    chosen = []
    for i in range(3):
        offered = r.candidates(i, [0, 1])
        assert offered, f"task {i} offered no device"
        chosen.append(pick(offered))
        r.commit(i, chosen[-1])
    assert chosen[0] == chosen[1] != chosen[2]


def test_y_goes_beside_x():
    r = Reservation(Problem.from_dict(TIGHT), "test")
    r.commit(0, 1)
    assert r.candidates(1, [0, 1]) == [1]


def test_a_placed_task_keeps_its_device():
    r = Reservation(Problem.from_dict(TIGHT), "test")
    r.commit(2, 0)
    assert r.candidates(2, [0, 1]) == [0]
