"""Registration rules, and a user-defined block used like a built-in one."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

import schedkit
from schedkit import Formulation, InvalidScheduleError, Problem, Schedule, TaskRun
from schedkit.blocks import BLOCKS, Assignment, Block, NoOverlap, Precedence, register_block
from schedkit.methods import METHODS
from schedkit.milp import Milp
from schedkit.validate import validate, violations

# ---------------------------------------------------------------------- user block
@pytest.fixture
def avoid_device():
    """Register a user block ``avoid_device`` for one test, then remove it again."""

    @register_block("avoid_device")
    class AvoidDevice(Block):
        """No task runs on one given device."""

        requires = frozenset({"x"})
        device: str
        """The device to keep free."""
        template = r"$$x_{i,\mathrm{ {{ device }} }} = 0 \quad \forall i$$"

        def build(self, ctx, blk):
            import pyomo.environ as pyo

            p = ctx.problem
            d = p.device_index[self.device]
            tasks = [p.tasks[i] for i in range(len(p.tasks)) if ctx.x_var(i, d) is not None]
            blk.off = pyo.Constraint(tasks, rule=lambda b, t: ctx.x_var(p.task_index[t], d) == 0)

        def violations(self, problem, schedule):
            return [f"task '{r.task}' runs on {r.device}" for r in schedule.tasks if r.device == self.device]

    yield AvoidDevice
    BLOCKS.unregister("avoid_device")


def two_tasks():
    # Two independent tasks: one per device gives 3; both on the gpu give 4.
    return Problem.from_dict({
        "name": "two",
        "devices": [{"name": "gpu"}, {"name": "cpu"}],
        "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 1}],
        "tasks": [{"name": "p", "durations": {"gpu": 2, "cpu": 3}},
                  {"name": "q", "durations": {"gpu": 2, "cpu": 3}}],
    })


def test_baseline_without_user_block():
    s = schedkit.solve(two_tasks(), "milp")
    assert s.makespan == pytest.approx(3.0)


def test_user_block_from_python(avoid_device):
    f = Formulation(blocks=(Assignment(), Precedence(), NoOverlap(), avoid_device(device="cpu")))
    s = Milp(formulation=f).solve(two_tasks())
    assert s.status == "optimal"
    assert s.makespan == pytest.approx(4.0)
    assert set(s.placement().values()) == {"gpu"}
    assert "avoid_device" in f.describe()


def test_user_block_from_yaml(avoid_device, tmp_path):
    text = """
name: gpu_only
objective: makespan
blocks:
  - assignment
  - precedence: {communication: true}
  - no_overlap
  - avoid_device: {device: cpu}
"""
    f = Formulation.from_data(yaml.safe_load(text))
    assert isinstance(f.blocks[-2], avoid_device) and f.blocks[-1].kind == "cuts"
    assert f.to_data()["blocks"][-2:] == [{"avoid_device": {"device": "cpu"}}, "cuts"]
    s = schedkit.solve(two_tasks(), "milp", formulation=f)
    assert s.makespan == pytest.approx(4.0)
    # And from a formulation file, by path.
    path = tmp_path / "gpu_only.yaml"
    path.write_text(text)
    s = schedkit.solve(two_tasks(), "milp", formulation=str(path))
    assert s.makespan == pytest.approx(4.0) and s.method == "milp:gpu_only"


def test_user_block_violations_are_used_by_the_validator(avoid_device):
    p = two_tasks()
    split = Schedule(problem="two", method="manual", status="heuristic",
                     tasks=[TaskRun(task="p", device="gpu", start=0, end=2),
                            TaskRun(task="q", device="cpu", start=0, end=3)])
    assert violations(p, split) == []  # valid under the semantic blocks
    f = Formulation.from_data({"blocks": ["assignment", "no_overlap", {"avoid_device": {"device": "cpu"}}]})
    assert violations(p, split, f.blocks) == ["avoid_device: task 'q' runs on cpu"]
    with pytest.raises(InvalidScheduleError, match="task 'q' runs on cpu"):
        validate(p, split, f.blocks)


def test_user_block_bad_parameter_is_a_formulation_error(avoid_device):
    from schedkit import FormulationError

    with pytest.raises(FormulationError, match="block 'avoid_device' has no parameter 'colour'"):
        Formulation.from_data({"blocks": ["assignment", {"avoid_device": {"device": "cpu", "colour": 1}}]})
    with pytest.raises(FormulationError, match="unknown block 'nosuchblock'"):
        Formulation.from_data({"blocks": ["assignment", "nosuchblock"]})


def test_inconsistent_formulation_is_a_formulation_error():
    from schedkit import FormulationError

    with pytest.raises(FormulationError, match="block 'no_overlap' needs family 'x'"):
        Formulation.from_data({"blocks": ["no_overlap"]})
    with pytest.raises(FormulationError, match="appears twice"):
        Formulation(blocks=(Assignment(), Assignment()))


def test_registering_a_kind_twice_is_an_error_unless_replaced(avoid_device):
    from schedkit import FormulationError

    with pytest.raises(FormulationError, match="block 'avoid_device' is already registered .*replace=True"):
        @register_block("avoid_device")
        class Other(Block):
            """Another block under the same kind."""

            def violations(self, problem, schedule):
                return []

    @register_block("avoid_device", replace=True)
    class Replacement(avoid_device):
        """The same block, replaced on purpose."""

    assert BLOCKS.get("avoid_device") is Replacement
    with pytest.raises(FormulationError, match="block 'assignment' is already registered"):
        register_block("assignment")(type("Mine", (Block,), {"__doc__": "A copy."}))
    assert BLOCKS.get("assignment") is Assignment


def test_a_method_name_cannot_be_taken_silently():
    from schedkit import Method, SchedkitError, register_method

    with pytest.raises(SchedkitError, match="method 'heft' is already registered"):
        register_method("heft")(type("MyHeft", (Method,), {"__doc__": "Mine."}))


def test_a_formulation_keeps_its_description(tmp_path):
    text = "name: gpu_first\ndescription: Keeps the description.\nblocks: [assignment, precedence, no_overlap]\n"
    path = tmp_path / "gpu_first.yaml"
    path.write_text(text)
    f = Formulation.load(path)
    assert f.description == "Keeps the description."
    assert f.to_data()["description"] == "Keeps the description."
    assert Formulation.from_data(f.to_data()) == f
    assert "Keeps the description." in f.describe()
    assert schedkit.milp.get_formulation("latency").description.startswith("Minimise the makespan")


def test_pyomo_face_gives_one_type_for_x():
    from pyomo.core.expr.numeric_expr import LinearExpression
    import pyomo.environ as pyo

    seen = []

    @register_block("probe_x")
    class ProbeX(Block):
        """Records what ctx.x returns."""

        requires = frozenset({"x"})

        def build(self, ctx, blk):
            p = ctx.problem
            for i in range(len(p.tasks)):
                for d in range(len(p.devices)):
                    seen.append((i, d, ctx.x(i, d), ctx.x_var(i, d)))
            blk.none = pyo.Constraint(expr=sum(ctx.x(i, 0) for i in range(len(p.tasks))) <= len(p.tasks))

        def violations(self, problem, schedule):
            return []

    try:
        p = Problem.from_dict({"devices": [{"name": "gpu"}, {"name": "cpu"}],
                               "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 1}],
                               "tasks": [{"name": "free", "durations": {"gpu": 1, "cpu": 2}},
                                         {"name": "fixed", "durations": {"cpu": 2}}]})
        Formulation.from_data({"blocks": ["assignment", "probe_x"]}).build(p)
    finally:
        BLOCKS.unregister("probe_x")
    assert all(isinstance(x, LinearExpression) for _, _, x, _ in seen)
    values = {(i, d): (pyo.value(x) if var is None else None) for i, d, x, var in seen}
    assert values[1, 0] == 0 and values[1, 1] == 1       # 'fixed' runs on the cpu only
    assert all(var is not None for i, d, _, var in seen if i == 0)


def test_threads_that_ask_a_fresh_registry_at_once_all_find_its_entries():
    # Two solves started at once in threads of a fresh process: one found the formulations
    # registry marked loaded while the other still imported the built-ins, and failed with
    # "unknown formulation 'latency' (known: none)".
    script = textwrap.dedent("""
        import threading
        from schedkit.methods import METHODS
        from schedkit.semantics.formulation import FORMULATIONS
        start, found = threading.Barrier(6), []
        def ask(registry, name):
            start.wait()
            found.append(registry.get(name) is not None)
        threads = [threading.Thread(target=ask, args=pair) for pair in
                   [(FORMULATIONS, "latency"), (METHODS, "heft")] * 3]
        for t in threads: t.start()
        for t in threads: t.join()
        print(found.count(True))
    """)
    for _ in range(3):   # (a race: three fresh processes)
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
        assert run.returncode == 0 and run.stdout.strip() == "6", run.stderr[-2000:]
