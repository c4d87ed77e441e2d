"""Sizes that a few bytes of input ask for are checked against the memory free before anything is allocated."""

import pytest

import schedkit.machine as machine
from schedkit import Problem, ProblemError
from schedkit.cli.main import main
from schedkit.generators import erdos_renyi, layered


def tiny_with_inputs(inputs: int) -> dict:
    return {"name": "w", "workload": {"inputs": inputs}, "devices": [{"name": "a"}, {"name": "b"}],
            "tasks": [{"name": "t0", "work": 1}, {"name": "t1", "work": 2}],
            "edges": [{"src": "t0", "dst": "t1", "size": 1}]}


@pytest.mark.parametrize("inputs", [10**7, 10**12, 10**30])
def test_a_workload_too_large_for_memory_is_refused_on_load(monkeypatch, inputs):
    monkeypatch.setattr(machine, "available_memory", lambda: 2**30)
    with pytest.raises(ProblemError, match=rf"workload.inputs: {inputs:,} inputs of 2 tasks are .* task runs to "
                                           r"schedule: about .* GB of memory, more than half of the 1.0 GB free"):
        Problem.from_dict(tiny_with_inputs(inputs))


def test_a_workload_that_fits_loads_and_its_sizes_add_up_at_once():
    problem = Problem.from_dict(tiny_with_inputs(10**5))   # (sizes 1..L: no table of L steps per size)
    assert problem.inputs == 10**5 and problem.batches.sizes[0][0][-1] == 10**5


@pytest.mark.parametrize("make", [lambda: erdos_renyi(10**6, 0.1, 4), lambda: erdos_renyi(200_000, 0.0, 4),
                                  lambda: layered(10**5, 10**5, 0.3, 0.1, 4)])
def test_a_graph_whose_edges_take_too_long_to_draw_is_refused(make):
    with pytest.raises(ProblemError, match=r"pairs of tasks to draw edges for, about .* minutes \(at most 10\)"):
        make()


@pytest.mark.parametrize("make", [lambda: erdos_renyi(5000, 1.0, 400), lambda: layered(5, 5000, 1.0, 0.0, 4)])
def test_a_graph_too_large_for_memory_is_refused(monkeypatch, make):
    monkeypatch.setattr(machine, "available_memory", lambda: 2**28)
    with pytest.raises(ProblemError, match=r"about .* GB of memory, more than half of the 0.2 GB free"):
        make()


@pytest.mark.parametrize("argv", [["generate", "er", "--tasks", "1000000000"],
                                  ["generate", "layered", "--levels", "100000", "--width", "100000"]])
def test_the_command_line_says_it_in_one_line_and_writes_nothing(tmp_path, capsys, argv):
    out = tmp_path / "g.json"
    assert main(argv + ["-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("schedkit: error: ") and err.count("\n") == 1 and not out.exists()


def test_solve_of_a_huge_workload_is_one_line(tmp_path, capsys):
    import json

    path = tmp_path / "w.json"
    path.write_text(json.dumps(tiny_with_inputs(10**15)))
    assert main(["solve", str(path), "-o", str(tmp_path / "s.json")]) == 1
    err = capsys.readouterr().err
    assert "workload.inputs: 1,000,000,000,000,000 inputs" in err and err.count("\n") == 1
    assert not (tmp_path / "s.json").exists()
