"""Parts are plain data; solve_part's answer rebuilds the same Result (transfers keep 'from')."""

import json
import pickle

import pytest

from helpers.decompose_cases import TWO_CHAINS, two_chains
from schedkit import SchedkitError, solve
from schedkit.reductions import Part, PartError, part_options, part_result, run_parts, solve_part
from schedkit.schedule import Result


def test_a_part_is_plain_data_and_pickles():
    part = Part.of(two_chains(), "milp", {"time_limit": 10})
    assert part.name == "two_chains"
    payload = part.payload()
    assert set(payload) == {"problem", "method", "options"}
    assert json.loads(json.dumps(payload)) == payload
    assert pickle.loads(pickle.dumps(payload)) == payload
    assert Part.of(part.problem, "milp", {"time_limit": 10}) == part


def test_parts_run_on_one_thread_unless_told_otherwise():
    assert Part.of(two_chains(), "milp").options == {"threads": 1}
    assert Part.of(two_chains(), "milp", {"threads": 3}).options == {"threads": 3}
    # every method takes 'threads' (a single-threaded one ignores it)
    assert Part.of(two_chains(), "heft").options == {"threads": 1}
    assert part_options("milp", {"gap": 0.1}) == {"gap": 0.1, "threads": 1}


def test_a_part_refuses_what_is_not_plain_data():
    with pytest.raises(SchedkitError, match="must be plain data"):
        Part.of(two_chains(), "milp", {"formulation": object()})
    with pytest.raises(SchedkitError, match="use Part.of"):
        Part(two_chains(), "milp")
    with pytest.raises(SchedkitError, match="unknown method 'nope'"):
        Part.of(two_chains(), "nope")


@pytest.mark.parametrize("method", ["milp", "heft"])
def test_solve_part_round_trip_keeps_every_field(method):
    answer = solve_part(Part.of(two_chains(), method).payload())
    assert json.loads(json.dumps(answer)) == answer  # plain JSON data
    transfers = answer["schedule"]["transfers"]
    assert transfers and all("from" in t and "from_" not in t for t in transfers)
    result = part_result(answer)
    assert isinstance(result, Result)
    assert result.schedule.transfers[0].from_ == "gpu0"
    assert result.model_dump(mode="json", by_alias=True) == answer
    assert Result.model_validate(answer) == result
    p = two_chains()
    result.to_schedule().validate(p)


def test_solve_part_gives_the_method_result():
    result = part_result(solve_part(Part.of(two_chains(), "milp").payload()))
    assert (result.status, result.objective, result.provenance) == ("optimal", 8.0, "exact")
    assert result.problem == "two_chains"


def test_solve_part_names_the_part_when_it_fails():
    bad = dict(TWO_CHAINS, name="broken", edges=[{"src": "a1", "dst": "zz"}])
    with pytest.raises(PartError, match=r"^part 'broken' \(heft\): ") as error:
        solve_part({"problem": bad, "method": "heft", "options": {}})
    assert pickle.loads(pickle.dumps(error.value)).args == error.value.args
    with pytest.raises(PartError, match=r"part 'two_chains' \(heft\): method 'heft' takes no option"):
        solve_part({"problem": Part.of(two_chains(), "heft").problem, "method": "heft",
                    "options": {"colour": 1}})


def test_a_part_keeps_its_problem_for_runs_in_this_process(monkeypatch):
    p = two_chains()
    part = Part.of(p, "heft")
    assert part.local is p and part.timed(None).local is p
    assert part == Part.of(part.problem, "heft")  # (the problem kept changes no equality)
    assert "local" not in part.payload()
    # In this process the part's own Problem is solved: its data is not parsed again.
    import schedkit.reductions.parts as parts

    def no_parse(data):
        raise AssertionError("parsed again")

    monkeypatch.setattr(parts, "parse_spec", no_parse)
    [result] = run_parts([part])
    assert result.schedule.makespan == solve(p, "heft").makespan


def test_a_part_that_is_the_whole_problem_is_validated_once(monkeypatch):
    p = two_chains()
    import schedkit.methods as methods

    calls = []
    real = methods.validate
    monkeypatch.setattr(methods, "validate", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    run_parts([Part.of(p, "heft")])
    assert calls == [p]                            # validated as a part
    calls.clear()
    [result] = run_parts([Part.of(p, "heft")], whole=p)
    assert calls == [] and result.schedule is not None  # the caller validates it on p


def test_a_fingerprint_is_computed_once_per_spec():
    from schedkit.reductions.reduction import _FINGERPRINTS, fingerprint

    p = two_chains()
    first = fingerprint(p)
    assert _FINGERPRINTS[id(p.spec)][1] == first
    assert fingerprint(p.spec) == first == fingerprint(two_chains())
    key = id(p.spec)
    del p
    import gc

    gc.collect()
    assert key not in _FINGERPRINTS or _FINGERPRINTS[key][0]() is not None


def test_a_part_solved_in_this_process_is_never_dumped():
    p = two_chains()
    part = Part.of(p, "heft")
    [result] = run_parts([part])
    assert part.data is None and result.schedule.makespan == solve(p, "heft").makespan
    # sent to a worker, it travels as its data, the same as a part made from the data
    assert part.payload()["problem"] == Part.of(p.spec, "heft").problem and part.data is not None


def test_a_part_needs_data_or_a_problem():
    with pytest.raises(SchedkitError, match="a part's problem is a dict"):
        Part(None, "heft")
