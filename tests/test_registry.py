"""Registry completeness, and a user-defined block used like a built-in one."""

from pathlib import Path

import pytest
import yaml

import schedkit
from schedkit import Formulation, InvalidScheduleError, Problem, Schedule, TaskRun
from schedkit.blocks import BLOCKS, Assignment, Block, NoOverlap, Precedence, register_block
from schedkit.methods import METHODS
from schedkit.milp import Milp
from schedkit.validate import validate, violations

TESTS = Path(__file__).resolve().parent

#: Blocks the built-in registry holds (user blocks registered by tests are not part of it).
BUILTIN_BLOCK_MODULES = ("schedkit.",)


def builtin_blocks():
    return [kind for kind, cls in BLOCKS.items() if cls.__module__.startswith(BUILTIN_BLOCK_MODULES)
            and cls.__module__ != "schedkit.blocks.base"]


def test_there_are_builtin_blocks():
    assert {"assignment", "placement", "precedence", "no_overlap", "memory"} <= set(builtin_blocks())


@pytest.mark.parametrize("kind", builtin_blocks())
def test_every_block_has_a_golden_lp_and_a_test_file(kind):
    assert (TESTS / "golden" / f"{kind}.lp").is_file(), f"tests/golden/{kind}.lp is missing"
    assert (TESTS / "blocks" / f"test_{kind}.py").is_file(), f"tests/blocks/test_{kind}.py is missing"


def _method_test_sources():
    files = [TESTS / "test_catalogue.py"] + sorted((TESTS / "heuristics").glob("test_*.py"))
    return "\n".join(f.read_text() for f in files if f.is_file())


@pytest.mark.parametrize("name", METHODS.names())
def test_every_method_is_tested(name):
    text = _method_test_sources()
    assert f'"{name}"' in text or f"'{name}'" in text, \
        f"method '{name}' appears neither in tests/test_catalogue.py nor in tests/heuristics"


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
    BLOCKS._entries.pop("avoid_device", None)


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
