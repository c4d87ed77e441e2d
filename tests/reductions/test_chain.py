"""combine(): the one rule for a decomposition's quality, bound and termination; Chain replays backwards."""

import pytest

from helpers.decompose_cases import Components, Identity, two_chains
from schedkit import SchedkitError
from schedkit.reductions import Chain, Part, Reduction, combine, run_parts
from schedkit.schedule import Quality, Result, Schedule, TaskRun, Termination


def part(quality, termination="finished", makespan=4.0, bound=3.0, name="p/0"):
    if quality in ("optimal", "feasible"):
        rows = Schedule(problem=name, method="m", status="feasible",
                        tasks=[TaskRun(task="t", device="d", start=0, end=makespan)])
        return Result(termination=termination, quality=quality, schedule=rows,
                      bound=makespan if quality == "optimal" else bound)
    return Result(termination=termination, quality=quality, problem=name, method="m",
                  message=f"{quality} here")


INVERTED = Result(termination="finished", quality="feasible", bound=5.0, method="inv", problem="p",
                  schedule=Schedule(problem="p", method="inv", status="feasible",
                                    tasks=[TaskRun(task="t", device="d", start=0, end=6.0)]))

CASES = [
    # exactness of the steps, qualities of the parts, status, bound
    (["equivalent"], ["optimal", "optimal"], "optimal", 6.0),
    ([], ["optimal"], "optimal", 6.0),
    (["equivalent", "equivalent"], ["optimal", "feasible"], "feasible", 5.0),
    (["equivalent", "restriction"], ["optimal"], "feasible", None),
    (["restriction"], ["optimal", "optimal"], "feasible", None),
    (["relaxation"], ["optimal"], "feasible", 5.0),
    (["equivalent", "relaxation"], ["feasible", "optimal"], "feasible", 5.0),
    (["relaxation", "restriction"], ["optimal"], "feasible", None),
    (["equivalent"], ["optimal", "infeasible"], "infeasible", None),
    (["equivalent", "equivalent"], ["none", "infeasible"], "infeasible", None),
    (["restriction"], ["infeasible"], "no_solution", None),
    (["relaxation"], ["optimal", "infeasible"], "no_solution", None),
    (["equivalent"], ["optimal", "none"], "no_solution", None),
]


@pytest.mark.parametrize("exactness, qualities, status, bound", CASES)
def test_combine_rules(exactness, qualities, status, bound):
    parts = [part(q, name=f"p/{k}") for k, q in enumerate(qualities)]
    has_schedule = all(q in ("optimal", "feasible") for q in qualities)
    result = combine(exactness, parts, INVERTED if has_schedule else None, method="dec", problem="p")
    assert result.status == status
    assert result.bound == bound
    assert result.provenance == "decomposition"
    assert (result.method, result.problem) == ("dec", "p")
    if has_schedule:
        assert result.schedule is INVERTED.schedule and result.objective == 6.0
    else:
        assert result.schedule is None
        assert result.message.startswith("part ") and f" of {len(qualities)} ('p/" in result.message


def test_combine_message_names_the_part_and_its_reason():
    result = combine(["equivalent"], [part("optimal"), part("none", "time_limit", name="p/1")])
    assert result.status == "no_solution"
    assert result.message == "part 2 of 2 ('p/1') found no schedule: none here"
    assert result.termination is Termination.TIME_LIMIT
    result = combine(["equivalent"], [part("optimal"), part("infeasible", name="p/1")])
    assert result.message == "part 2 of 2 ('p/1') is infeasible: infeasible here"


@pytest.mark.parametrize("terminations, expected", [
    (["finished", "finished"], "finished"),
    (["finished", "gap"], "gap"),
    (["gap", "time_limit"], "time_limit"),
    (["time_limit", "interrupted"], "interrupted"),
    (["error", "time_limit"], "error"),
])
def test_combine_reports_the_most_telling_termination(terminations, expected):
    parts = [part("feasible", t) for t in terminations]
    assert combine(["equivalent"], parts, INVERTED).termination.value == expected


def test_heuristic_parts_make_a_heuristic_decomposition():
    # as the parts' method would say (fusion:heft said "feasible" where heft says "heuristic")
    heuristic = Result.heuristic(part("feasible").schedule, bound=3.0)
    result = combine(["equivalent"], [heuristic], INVERTED)
    assert (result.status, result.quality, result.provenance) == ("heuristic", Quality.FEASIBLE, "heuristic")
    result = combine(["equivalent"], [heuristic, part("feasible")], INVERTED)  # one exact part
    assert (result.status, result.provenance) == ("feasible", "decomposition")


@pytest.mark.parametrize("exactness, status", [
    (["equivalent"], "optimal"), (["relaxation"], "optimal"), (["restriction"], "feasible")])
def test_a_bound_that_meets_the_objective_proves_it_optimal(exactness, status):
    # bridge_dp said "feasible ... gap=0.00%": its DP over the parts' bounds met the schedule,
    # while some part (a device pair not chosen) had not proved its own optimum
    closed = INVERTED.model_copy(update={"bound": 6.0 * (1 - 1e-6)})
    result = combine(exactness, [part("optimal"), part("feasible", "time_limit")], closed)
    assert (result.status, result.termination.value) == (status, "time_limit")
    assert result.bound == (6.0 if status == "optimal" else None)
    not_closed = INVERTED.model_copy(update={"bound": 6.0 * (1 - 1e-3)})
    assert combine(exactness, [part("optimal"), part("feasible")], not_closed).status == "feasible"


def test_an_inverse_without_schedule_gives_no_solution():
    failed = Result.nothing("dp", "p", "finished", message="no device pair fits")
    result = combine(["equivalent"], [part("optimal")], failed)
    assert result.status == "no_solution"
    assert result.message == "the decomposition could not combine its parts: no device pair fits"


def test_combine_refuses_an_unknown_exactness():
    with pytest.raises(SchedkitError, match="exactness 'exact' is not one of"):
        combine(["exact"], [part("optimal")], INVERTED)


def test_chain_applies_forward_and_inverts_backwards():
    calls = []

    class Recording(Reduction):
        exactness = "equivalent"

        def __init__(self, label):
            super().__init__()
            self.label = label

        @property
        def name(self):
            return self.label

        def apply(self, problem, blocks=None):
            calls.append(("apply", self.label))
            return problem, self.inverse(problem, self.label)

        def invert(self, results, inverse):
            calls.append(("invert", inverse.payload))
            return results[0]

    p = two_chains()
    chain = Chain([Recording("first"), Recording("second")], Components())
    parts, inverse = chain.apply(p)
    results = run_parts([Part.of(q, "milp") for q in parts])
    result = chain.invert(results, inverse, problem=p, method="chained")
    assert calls == [("apply", "first"), ("apply", "second"), ("invert", "second"), ("invert", "first")]
    assert (result.status, result.objective, result.bound, result.method, result.problem) == \
        ("optimal", 8.0, 8.0, "chained", "two_chains")
    assert sorted(r.task for r in result.schedule.tasks) == ["a1", "a2", "a3", "b1", "b2"]


def test_a_chain_without_split_has_one_part():
    p = two_chains()
    chain = Chain([Identity()])
    parts, inverse = chain.apply(p)
    assert [q.name for q in parts] == ["two_chains"]
    result = chain.invert(run_parts([Part.of(parts[0], "heft")]), inverse, problem=p)
    assert result.status == "heuristic" and result.bound is not None  # heft's word
