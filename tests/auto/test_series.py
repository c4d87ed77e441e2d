"""auto's series search: its bound never exceeds the optimum, its schedules are valid, and
auto names it when its bound is the best; the split bound holds on every schedule."""

import pytest
from hypothesis import given, settings, strategies as st

import schedkit
from schedkit import Problem
from schedkit.auto.series import series_search
from schedkit.methods import METHODS
from schedkit.problem.bounds import lower_bound, split_bound
from schedkit.semantics import get_formulation
from schedkit.validate import violations

from helpers.series_cases import chain_of_four

MOIRAI = get_formulation("moirai")


@st.composite
def chains(draw):
    """A chain of 2-3 modules between articulation tasks, on 2-3 linked devices; each module
    one to three tasks in parallel, sometimes joined by an edge."""
    m = draw(st.integers(2, 3))
    devices = [{"name": f"d{k}"} for k in range(m)]
    links = [{"src": f"d{u}", "dst": f"d{v}", "bandwidth": draw(st.sampled_from([0.5, 1, 2])),
              "bidirectional": False} for u in range(m) for v in range(m) if u != v]
    dur = st.integers(0, 5)
    tasks, edges = [], []

    def task(name):
        tasks.append({"name": name, "durations": {f"d{k}": draw(dur) for k in range(m)}})

    size = st.sampled_from([0, 1, 2, 4])
    task("a0")
    for k in range(draw(st.integers(2, 3))):
        middle = [f"m{k}_{j}" for j in range(draw(st.integers(1, 3)))]
        for name in middle:
            task(name)
            edges.append({"src": f"a{k}", "dst": name, "size": draw(size)})
            edges.append({"src": name, "dst": f"a{k + 1}", "size": draw(size)})
        if len(middle) > 1 and draw(st.booleans()):
            edges.append({"src": middle[0], "dst": middle[1], "size": draw(size)})
        task(f"a{k + 1}")
    return Problem.from_dict({"devices": devices, "links": links, "tasks": tasks, "edges": edges})


def _exact(problem):
    result = METHODS.get("milp")(formulation="moirai", solver="highs", threads=1, time_limit=60).result(problem)
    assert result.status == "optimal"
    return result.objective


def _solve(part, seconds):
    return METHODS.get("milp")(formulation="moirai", solver="highs", threads=1, time_limit=seconds).result(part)


@pytest.mark.parametrize("blocks", [None, MOIRAI.blocks], ids=["semantics", "moirai"])
@settings(max_examples=12, deadline=None)
@given(chains())
def test_the_series_bound_never_exceeds_the_optimum_and_its_schedules_are_valid(blocks, problem):
    # (with the formulation's blocks, as auto calls it, each pair asked is relaxed first)
    optimum = _exact(problem)
    found = series_search(problem, _solve, 60, MOIRAI.timing_rules(problem), blocks=blocks)
    assert found is not None and found.modules >= 2
    assert found.bound <= optimum + 1e-6
    for schedule in found.schedules:
        assert not violations(problem, schedule, MOIRAI.blocks)
        assert schedule.makespan >= optimum - 1e-6
    if found.proven:
        assert min(s.makespan for s in found.schedules) == pytest.approx(optimum, abs=1e-6)


@settings(max_examples=12, deadline=None)
@given(chains())
def test_with_time_for_every_pair_the_search_proves_the_optimum(problem):
    # (every module small: each free or pinned solve is proven, so the chain's pairs close)
    found = series_search(problem, _solve, 120, MOIRAI.timing_rules(problem))
    assert found.proven
    assert found.bound == pytest.approx(_exact(problem), abs=1e-6)


@settings(max_examples=15, deadline=None)
@given(chains())
def test_the_split_bound_never_exceeds_the_optimum(problem):
    assert split_bound(problem) <= _exact(problem) + 1e-9


def test_the_split_bound_is_zero_on_a_graph_in_two_pieces():
    p = Problem.from_dict({"devices": [{"name": "a"}, {"name": "b"}],
                           "links": [{"src": "a", "dst": "b", "bandwidth": 1}],
                           "tasks": [{"name": "x", "work": 3}, {"name": "y", "work": 3}]})
    assert split_bound(p) == 0.0      # (x on a, y on b: 3, with no edge between them)


def test_a_graph_without_a_cut_has_no_series():
    p = Problem.from_dict({"devices": [{"name": "a"}, {"name": "b"}],
                           "links": [{"src": "a", "dst": "b", "bandwidth": 1}],
                           "tasks": [{"name": f"t{k}", "work": 1} for k in range(4)],
                           "edges": [{"src": "t0", "dst": "t1"}, {"src": "t0", "dst": "t2"},
                                     {"src": "t1", "dst": "t3"}, {"src": "t2", "dst": "t3"},
                                     {"src": "t1", "dst": "t2"}, {"src": "t0", "dst": "t3"}]})
    assert series_search(p, _solve, 5, MOIRAI.timing_rules(p)) is None


def test_auto_under_ports_takes_the_series_bound_and_names_it():
    problem = chain_of_four()
    schedule = schedkit.solve(problem, "auto", formulation="moirai", time_limit=30, threads=1)
    phases = {p["phase"]: p for p in schedule.phases}
    assert "skipped" in phases["bridge_dp"]["note"] and "series" in phases
    assert schedule.bound > lower_bound(problem) and "bound from series" in schedule.message
    assert schedule.status == "optimal" and schedule.bound == pytest.approx(schedule.makespan)
    assert not violations(problem, schedule, MOIRAI.blocks)


def test_where_bridge_dp_applies_the_series_search_is_skipped():
    schedule = schedkit.solve(chain_of_four(), "auto", formulation="latency", time_limit=30, threads=1)
    phases = [p["phase"] for p in schedule.phases]
    assert "bridge_dp" in phases and "series" not in phases




@settings(max_examples=10, deadline=None)
@given(chains())
def test_with_modules_too_large_to_solve_the_bound_comes_from_the_parts_alone(problem):
    import schedkit.auto.series as series

    kept = series.MAX_MODULE_TASKS, series.MAX_CHAIN_TASKS
    series.MAX_MODULE_TASKS = series.MAX_CHAIN_TASKS = 0     # (every module is too large to solve)
    try:
        found = series_search(problem, _solve, 60, MOIRAI.timing_rules(problem), blocks=MOIRAI.blocks)
    finally:
        series.MAX_MODULE_TASKS, series.MAX_CHAIN_TASKS = kept
    assert found.solves == 0 and found.schedules == []      # (no part solved, no incumbent given)
    assert 0 <= found.bound <= _exact(problem) + 1e-9


@settings(max_examples=10, deadline=None)
@given(chains())
def test_modules_too_large_to_prove_are_solved_once_in_chain_order(problem):
    import schedkit.auto.series as series

    kept = series.MAX_MODULE_TASKS
    series.MAX_MODULE_TASKS = 0     # (every module too large to prove free, small enough for the chain pass)
    try:
        found = series_search(problem, _solve, 60, MOIRAI.timing_rules(problem), blocks=MOIRAI.blocks)
    finally:
        series.MAX_MODULE_TASKS = kept
    optimum = _exact(problem)
    # (each module once in the chain pass, unless one alike was solved with its entry on the
    # same device: its schedule is carried over; then the pairs asked)
    assert 1 <= found.solves
    assert 0 <= found.bound <= optimum + 1e-6
    assert found.schedules      # (the chain pass's pairs agree at every cut: they stitch)
    for schedule in found.schedules:
        assert not violations(problem, schedule, MOIRAI.blocks)
        assert schedule.makespan >= optimum - 1e-6


def test_relaxations_raise_the_bound_of_modules_too_large_to_solve():
    import schedkit.auto.series as series

    problem = chain_of_four()
    kept = series.MAX_MODULE_TASKS, series.MAX_CHAIN_TASKS
    series.MAX_MODULE_TASKS = series.MAX_CHAIN_TASKS = 0
    try:
        relaxed = series_search(problem, _solve, 60, MOIRAI.timing_rules(problem), blocks=MOIRAI.blocks)
        alone = series_search(problem, _solve, 60, MOIRAI.timing_rules(problem))   # (no formulation: no relaxation)
    finally:
        series.MAX_MODULE_TASKS, series.MAX_CHAIN_TASKS = kept
    assert alone.bound < relaxed.bound <= _exact(problem) + 1e-6


def test_modules_alike_are_bounded_by_one_solve_of_their_least_part():
    import schedkit.auto.series as series

    problem = chain_of_four()
    asked = []

    def solve(part, seconds):
        asked.append(part)
        return _solve(part, seconds)

    kept = series.MAX_MODULE_TASKS
    series.MAX_MODULE_TASKS = 0     # (too large to prove free one by one: the classes' solves come first)
    try:
        found = series_search(problem, solve, 60, MOIRAI.timing_rules(problem), blocks=MOIRAI.blocks)
    finally:
        series.MAX_MODULE_TASKS = kept
    # (the four diamonds, each three tasks side by side and the task after them, are one class)
    assert [len(part.tasks) for part in asked if part.name.endswith("windows alike")] == [5]
    assert asked[0].name.endswith("windows alike") and asked[0].tasks[-1].endswith("~twin")
    assert found.bound <= _exact(problem) + 1e-6


def test_a_module_alike_one_solved_with_the_same_entry_takes_its_schedule():
    import schedkit.auto.series as series

    problem = chain_of_four()
    asked = []

    def solve(part, seconds):
        asked.append(part.name)
        return _solve(part, seconds)

    import schedkit.auto.series_alike as series_alike

    kept = series.MAX_MODULE_TASKS, series_alike.CLASS_SHARE
    series.MAX_MODULE_TASKS, series_alike.CLASS_SHARE = 0, 0.0    # (the chain pass alone, then the pairs)
    try:
        found = series_search(problem, solve, 60, MOIRAI.timing_rules(problem), blocks=MOIRAI.blocks)
    finally:
        series.MAX_MODULE_TASKS, series_alike.CLASS_SHARE = kept
    numbers = [int(name.rsplit("series", 1)[1]) for name in asked]
    chain_pass = numbers[:next((k for k in range(1, len(numbers)) if numbers[k] <= numbers[k - 1]), len(numbers))]
    # (the diamonds are alike and each enters on the device the one before left: after the
    # first, their schedules are carried over, not solved)
    assert chain_pass[:2] == [1, 2] and len(chain_pass) < found.modules
    assert found.schedules
    for schedule in found.schedules:
        assert not violations(problem, schedule, MOIRAI.blocks)


@pytest.fixture
def device_count_blocks():
    """Two blocks of a user's own: at least (``least_tasks``) and at most (``most_tasks``,
    which says it holds on parts) a number of tasks per device."""
    import pyomo.environ as pyo
    from schedkit.blocks import BLOCKS, Block, register_block

    def count(schedule, device):
        return sum(run.device == device for run in schedule.tasks)

    @register_block("least_tasks")
    class LeastTasks(Block):
        """Every device runs at least ``limit`` tasks: a part of a few tasks may not."""

        requires = frozenset({"x"})
        limit: int = 1

        def build(self, ctx, blk):
            p = ctx.problem
            blk.rows = pyo.Constraint(p.devices, rule=lambda b, d: sum(
                ctx.x(i, p.device_index[d]) for i in range(len(p.tasks))) >= self.limit)

        def violations(self, problem, schedule):
            return [f"{d} runs fewer than {self.limit}" for d in problem.devices if count(schedule, d) < self.limit]

    @register_block("most_tasks")
    class MostTasks(Block):
        """No device runs more than ``limit`` tasks: true of every part when true of the whole."""

        requires = frozenset({"x"})
        holds_on_parts = True
        limit: int = 4

        def build(self, ctx, blk):
            p = ctx.problem
            blk.rows = pyo.Constraint(p.devices, rule=lambda b, d: sum(
                ctx.x(i, p.device_index[d]) for i in range(len(p.tasks))) <= self.limit)

        def violations(self, problem, schedule):
            return [f"{d} runs more than {self.limit}" for d in problem.devices if count(schedule, d) > self.limit]

    try:
        yield
    finally:
        BLOCKS.unregister("least_tasks")
        BLOCKS.unregister("most_tasks")


def _slow_third_device_chain() -> Problem:
    """Three modules of two parallel tasks between articulation tasks; d2 is three times slower."""
    devices = [{"name": f"d{k}"} for k in range(3)]
    links = [{"src": f"d{u}", "dst": f"d{v}", "bandwidth": 2} for u in range(3) for v in range(u + 1, 3)]
    tasks, edges = [{"name": "a0", "durations": {"d0": 1, "d1": 1, "d2": 3}}], []
    for k in range(3):
        for j in range(2):
            tasks.append({"name": f"m{k}{j}", "durations": {"d0": 2, "d1": 2, "d2": 6}})
            edges += [{"src": f"a{k}", "dst": f"m{k}{j}", "size": 1}, {"src": f"m{k}{j}", "dst": f"a{k + 1}", "size": 1}]
        tasks.append({"name": f"a{k + 1}", "durations": {"d0": 1, "d1": 1, "d2": 3}})
    return Problem.from_dict({"devices": devices, "links": links, "tasks": tasks, "edges": edges})


def test_a_block_that_asks_more_of_a_part_than_of_the_whole_keeps_the_series_search_out(device_count_blocks):
    # (one task on the slow d2 costs the whole problem 14 - 12 = 2; asked of every module, as
    # the series search asked it, three times that: the series bound was 17, above the optimum 14)
    problem = _slow_third_device_chain()
    formulation = {"name": "least", "blocks": list(MOIRAI.to_data()["blocks"]) + ["least_tasks"]}
    exact = schedkit.solve(problem, "milp", formulation=formulation, solver="highs", threads=1)
    assert exact.status == "optimal" and exact.makespan == pytest.approx(14)
    schedule = schedkit.solve(problem, "auto", formulation=formulation, time_limit=30, threads=1)
    note = next(p for p in schedule.phases if p["phase"] == "series")["note"]
    assert note.startswith("skipped: block 'least_tasks' may ask more of a part")
    assert schedule.bound <= 14 + 1e-6 and schedule.makespan == pytest.approx(14)


def test_a_block_of_your_own_that_holds_on_parts_is_solved_part_by_part(device_count_blocks):
    # (the parts' solves started from HEFT, which cannot honour the block: every one failed, and
    # the search gave no bound of its own; its stitched schedule, 4 tasks per device in each
    # part, breaks the whole's limit: it is said, and neither used nor shown as a result)
    problem = _slow_third_device_chain()
    formulation = {"name": "most", "blocks": list(MOIRAI.to_data()["blocks"]) + [{"most_tasks": {"limit": 4}}]}
    optimum = schedkit.solve(problem, "milp", formulation=formulation, solver="highs", threads=1).makespan
    schedule = schedkit.solve(problem, "auto", formulation=formulation, time_limit=30, threads=1)
    series = next(p for p in schedule.phases if p["phase"] == "series")
    assert lower_bound(problem) < series["bound"] <= optimum
    assert "makespan" not in series and "status" not in series
    assert series["note"].startswith("its schedule breaks auto's formulation (most_tasks: d0 runs more than 4): "
                                     "not used; 3 modules, ")
    assert schedule.bound <= optimum + 1e-6 and schedule.makespan == pytest.approx(optimum)
    assert violations(problem, schedule, get_formulation(formulation).blocks) == []
