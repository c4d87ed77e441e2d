"""Windows alike: one class per shape, and a least part no slower than any member."""

from schedkit import Problem
from schedkit.auto.alike import alike, carried, least_part
from schedkit.auto.spine_bound import spine_bound
from schedkit.problem.bounds import formulation_bound
from schedkit.problem.spine import spine
from schedkit.semantics import get_formulation

from helpers.optima import proven_optimum
from helpers.spine_cases import layers


def test_windows_alike_share_one_bound_of_their_least_durations():
    problem = layers(works=(3, 2, 2))
    formulation = get_formulation("latency")
    s = spine(problem)
    classes = alike(problem, s.windows, s.entries)
    wide = next(c for c in classes if len(c) == 2)
    assert [[problem.tasks[i] for i in s.windows[t]][0] for t, _ in wide] == ["x0", "x2"]
    least = least_part(problem, s.windows, s.entries, wide)
    # (the first wide layer's tasks of 3, the last's of 2: the least at each position)
    assert sorted(least.durations[least.task_index[t]][0] for t in ("x0", "y0", "z0")) == [2.0, 2.0, 2.0]
    bound = spine_bound(problem, list(formulation.blocks), formulation.timing_rules(problem), 30)
    assert formulation_bound(problem, list(formulation.blocks)) < bound <= proven_optimum(problem, "latency") + 1e-6


def _pairs(times=(3.0, 5.0), colocate=False) -> Problem:
    """Two windows alike, ``a_k -> b_k``, whose edges give their own transfer times."""
    tasks = [{"name": f"{t}{k}", "durations": {"d0": 1.0 + k, "d1": 2.0}, **({"colocate": f"g{k}"} if colocate else {})}
             for k in range(2) for t in "ab"]
    return Problem.from_dict({"devices": [{"name": "d0"}, {"name": "d1"}],
                              "links": [{"src": "d0", "dst": "d1", "bandwidth": 1, "bidirectional": True}],
                              "tasks": tasks,
                              "edges": [{"src": f"a{k}", "dst": f"b{k}", "size": 1.0 + k,
                                         "transfer_times": {"d0->d1": t, "d1->d0": 2 * t}}
                                        for k, t in enumerate(times)]})


def test_the_least_part_takes_each_pairs_least_transfer_and_duration():
    p = _pairs()
    windows = [[0, 1], [2, 3]]
    classes = alike(p, windows, [None, None])
    assert [[t for t, _ in c] for c in classes] == [[0, 1]]
    least = least_part(p, windows, [None, None], classes[0])
    size = least.edges[0][2]
    assert (least.comm_time(size, 0, 1), least.comm_time(size, 1, 0)) == (3.0, 6.0)
    assert least.durations[0] == {0: 1.0, 1: 2.0} and least.tasks == ["a0", "b0"]


def test_a_window_with_a_collocation_group_is_a_class_of_its_own():
    p = _pairs(colocate=True)
    assert [[t for t, _ in c] for c in alike(p, [[0, 1], [2, 3]], [None, None])] == [[0], [1]]


def test_a_schedule_is_carried_only_onto_devices_the_part_allows():
    from schedkit.methods import METHODS
    from schedkit.reductions.subproblem import sub_problem

    p = _pairs()
    source = sub_problem(p, [0, 1], "source")
    schedule = METHODS.get("heft")().solve(source)
    mine = sub_problem(p, [2, 3], "mine")
    moved = carried(p, mine, schedule, {2: 0, 3: 1}, None)
    devices = {r.task: r.device for r in schedule.tasks}
    assert [(r.task, r.device) for r in moved.tasks] == [("a1", devices["a0"]), ("b1", devices["b0"])]
    pinned = sub_problem(p, [2, 3], "pinned", pins={2: [1 - p.device_index[devices["a0"]]]})
    assert carried(p, pinned, schedule, {2: 0, 3: 1}, None) is None
