"""Inverse data is checked: it refuses another reduction and another problem."""

import pytest

from helpers.decompose_cases import TWO_CHAINS, Coarse, Components, Identity, two_chains
from schedkit import Problem, SchedkitError
from schedkit.reductions import (DECOMPOSITIONS, Chain, InverseData, Reduction, Split, fingerprint,
                                register_decomposition, unregister_decomposition)
from schedkit.methods import METHODS


def other_problem() -> Problem:
    data = dict(TWO_CHAINS, name="other")
    return Problem.from_dict(data)


def test_fingerprint_is_stable_and_ignores_key_order():
    p = two_chains()
    reordered = {key: TWO_CHAINS[key] for key in reversed(list(TWO_CHAINS))}
    assert fingerprint(p) == fingerprint(Problem.from_dict(reordered)) == fingerprint(p.spec)
    assert fingerprint(p) != fingerprint(other_problem())


@pytest.mark.parametrize("change", [
    lambda e: e.update(size=e.get("size", 1.0) + 1), lambda e: e.pop("size", None) if "size" in e else e.update(size=0.0),
    lambda e: e.update(transfer_times={"a->b": 9.0}), lambda e: e.update(src=e["dst"], dst=e["src"])])
def test_fingerprint_tells_every_change_of_an_edge(change):
    data = {"devices": [{"name": "a"}, {"name": "b"}], "links": [{"src": "a", "dst": "b", "bandwidth": 1.0}],
            "tasks": [{"name": t, "work": 1.0, "output_size": 2.0} for t in ("x", "y", "z")],
            "edges": [{"src": "x", "dst": "y", "size": 3.0}, {"src": "y", "dst": "z"}]}
    first = fingerprint(Problem.from_dict(data))
    for k in range(2):
        changed = {**data, "edges": [dict(e) for e in data["edges"]]}
        change(changed["edges"][k])
        assert fingerprint(Problem.from_dict(changed)) != first, k


def test_inverse_data_names_its_maker_and_its_problem():
    p = two_chains()
    _, inverse = Identity().apply(p)
    assert isinstance(inverse, InverseData)
    assert (inverse.made_by, inverse.problem) == ("identity", fingerprint(p))
    inverse.check(Identity(), p)
    inverse.check(Identity, p.spec)
    with pytest.raises(AttributeError):
        inverse.made_by = "other"  # frozen


def test_inverse_data_refuses_another_reduction():
    p = two_chains()
    _, inverse = Identity().apply(p)
    with pytest.raises(SchedkitError) as error:
        inverse.check(Coarse(), p)
    assert str(error.value) == "inverse data of reduction 'identity' used by 'coarse'"


def test_inverse_data_refuses_another_problem():
    p = two_chains()
    _, inverse = Identity().apply(p)
    with pytest.raises(SchedkitError) as error:
        inverse.check(Identity(), other_problem())
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith("inverse data of reduction 'identity' was made from problem ")
    assert "not from problem 'other'" in message


def test_chain_refuses_inverse_data_of_another_problem_or_chain():
    p = two_chains()
    chain = Chain([Identity()], Components())
    parts, inverse = chain.apply(p)
    results = [None] * len(parts)
    with pytest.raises(SchedkitError, match="not from problem 'other'"):
        chain.invert(results, inverse, problem=other_problem())
    with pytest.raises(SchedkitError, match="used by 'components'"):
        Chain.of(Components()).invert(results, inverse, problem=p)


def test_chain_checks_each_step_against_its_own_inverse():
    p = two_chains()
    chain = Chain([Identity()], Components())
    parts, inverse = chain.apply(p)
    swapped = Chain([Coarse()], Components(), name=chain.name)  # same name, other steps
    with pytest.raises(SchedkitError, match="inverse data of reduction 'identity' used by 'coarse'"):
        swapped.invert([_feasible(q) for q in parts], inverse, problem=p)


def _feasible(problem):
    from schedkit import solve
    from schedkit.schedule import Result

    return Result.heuristic(solve(problem, "heft"))


def test_chain_counts_the_results():
    p = two_chains()
    chain = Chain.of(Components())
    parts, inverse = chain.apply(p)
    assert len(parts) == 2
    with pytest.raises(SchedkitError, match="made 2 parts, got 1 results"):
        chain.invert([_feasible(parts[0])], inverse, problem=p)


def test_chain_names_and_exactness():
    chain = Chain([Identity(), Coarse()], Components())
    assert chain.name == "identity+coarse+components"
    assert chain.exactness == ("equivalent", "restriction", "equivalent")
    assert Chain.of(Identity()).exactness == ("equivalent",)
    with pytest.raises(TypeError, match="may only end a chain"):
        Chain([Components()])
    with pytest.raises(TypeError, match="is not a Split"):
        Chain([], Identity())


def test_a_step_that_does_not_accept_is_a_one_line_error():
    data = dict(TWO_CHAINS, tasks=[dict(t, durations={**t["durations"], "gpu1": 5}, pin=None)
                                   if t["name"] == "a3" else t for t in TWO_CHAINS["tasks"]])
    p = Problem.from_dict(data)  # a3 may now run on gpu1, which chain b uses
    assert not Components().accepts(p)
    with pytest.raises(SchedkitError, match="decomposition 'components' does not accept problem 'two_chains'"):
        Chain([Identity()], Components()).apply(p)


def test_exactness_must_be_one_of_three_words():
    with pytest.raises(TypeError, match="exactness is 'exact'"):
        class Wrong(Reduction):  # noqa: F841
            exactness = "exact"


def test_register_decomposition_registers_a_method_and_unregisters_both():
    class Whole(Split):
        """One part: the problem itself."""

        exactness = "equivalent"

        def apply(self, problem, blocks=None):
            return [problem], self.inverse(problem)

        def invert(self, results, inverse):
            return results[0]

    try:
        register_decomposition("test_whole")(Whole)
        assert Whole.name == "test_whole"
        assert DECOMPOSITIONS.get("test_whole") is Whole
        method = METHODS.get("test_whole")
        assert method.decomposition is Whole and method.provenance == "decomposition"
        with pytest.raises(SchedkitError, match="already registered"):
            register_decomposition("test_whole")(Identity)
    finally:
        unregister_decomposition("test_whole")
    assert "test_whole" not in DECOMPOSITIONS.names()
    assert "test_whole" not in METHODS.names()
    with pytest.raises(TypeError, match="neither a Reduction nor a Split"):
        register_decomposition("test_wrong")(dict)


def test_a_name_taken_by_a_method_registers_nothing():
    class Whole(Components):
        """Components under a taken name."""

    with pytest.raises(SchedkitError, match="method 'heft' is already registered"):
        register_decomposition("heft")(Whole)
    assert "heft" not in DECOMPOSITIONS.names()
    assert METHODS.get("heft").__module__ == "schedkit.heuristics.heft"
    assert Whole.name == "components"
