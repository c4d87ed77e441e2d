"""The one upward rank: golden rank vectors, and every consumer uses schedkit.problem.graph.

The golden vectors pin down the definition (Topcuoglu et al. 2002: an edge costs
``mean latency + size / mean bandwidth`` over the linked ordered pairs of distinct allowed
devices of its ends) so that a change of rank, which moves HEFT, the MILP horizon and the
partitioners at once, is noticed.
"""

import pytest

import schedkit.heuristics.components as components
import schedkit.heuristics.measures as measures
import schedkit.heuristics.partitioners as partitioners
import schedkit.semantics.horizon as horizon
from schedkit import Problem
from schedkit.problem import graph
from schedkit.validate import semantic_blocks


@pytest.fixture(scope="module")
def topcuoglu():
    return Problem.load("examples/topcuoglu2002.json")


@pytest.fixture(scope="module")
def hetero20():
    return Problem.load("examples/hetero20.yaml")


# Topcuoglu, Hariri and Wu (2002): the upward ranks the paper publishes for its sample graph.
PAPER_UPWARD = [108.000, 77.000, 80.000, 80.000, 69.000, 63.333, 42.667, 35.667, 44.333, 14.667]
# rank_d by the same mean costs: on the critical path n1, n2, n9, n10 (CPOP's path in the paper)
# upward + downward is |CP| = rank_u(n1) = 108.
TOPCUOGLU_DOWNWARD = [0.0, 31.0, 25.0, 22.0, 24.0, 27.0, 62.333333, 66.666667, 63.666667,
                      93.333333]

# hetero20, computed and rounded to 6 decimals. Checked by hand (cpu-gpu links: 1.6e7, 0.01;
# gpu0-gpu1: 5e7, 0.005):
# - topk (cpu only, no successor): 0.2.
# - scale -> topk (4e2): pairs gpu0->cpu, gpu1->cpu: 4e2 / 1.6e7 + 0.01 = 0.010025;
#   scale = (0.1 + 0.01 + 0.02) / 3 + 0.010025 + 0.2 = 0.253358.
# - score -> scale (4e2): the 6 ordered pairs of distinct devices, mean bandwidth
#   (4 * 1.6e7 + 2 * 5e7) / 6 = 2.7333e7, mean latency (4 * 0.01 + 2 * 0.005) / 6:
#   4e2 / 2.7333e7 + 0.008333 = 0.008348; score = 0.086667 + 0.008348 + 0.253358 = 0.348373.
#   (Averaging 1 / bandwidth instead, the partitioners' former rule, gives 0.008353.)
# - decode -> patch_embed (6e5, cpu to a gpu): 0.0375 + 0.01; decode = 2.5 + 0.0475 + 31.879979.
# - downward, topk: 35.37412 + 0.043333 + 0.010025 = 35.427479.
HETERO20_UPWARD = [35.627479, 34.427479, 9.25614, 0.2, 8.846121, 8.575267, 6.96108, 4.596893,
                   2.982706, 0.618519, 31.879979, 28.416361, 22.76941, 14.572458, 8.925507,
                   0.728556, 0.480113, 0.513446, 0.348373, 0.253358]
HETERO20_DOWNWARD = [0.0, 1.2, 0.0, 35.427479, 0.410019, 0.680873, 2.29506, 4.659247, 6.273434,
                     8.637621, 3.7475, 7.211118, 12.858069, 21.05502, 26.701972, 34.898923,
                     8.776028, 35.114033, 35.279106, 35.37412]


def test_topcuoglu_upward_rank_is_the_papers(topcuoglu):
    assert graph.upward_rank(topcuoglu) == pytest.approx(PAPER_UPWARD, abs=5e-4)


def test_topcuoglu_downward_rank_and_critical_path(topcuoglu):
    up, down = graph.upward_rank(topcuoglu), graph.downward_rank(topcuoglu)
    assert down == pytest.approx(TOPCUOGLU_DOWNWARD, abs=1e-6)
    total = [a + b for a, b in zip(up, down)]
    on_path = [topcuoglu.task_index[n] for n in ("n1", "n2", "n9", "n10")]
    assert [total[i] for i in on_path] == pytest.approx([108.0] * 4)
    assert max(total) == pytest.approx(108.0)
    assert [topcuoglu.tasks[i] for i in measures.critical_path_tasks(topcuoglu)] \
        == ["n1", "n2", "n9", "n10"]


def test_hetero20_golden_ranks(hetero20):
    assert graph.upward_rank(hetero20) == pytest.approx(HETERO20_UPWARD, abs=1e-6)
    assert graph.downward_rank(hetero20) == pytest.approx(HETERO20_DOWNWARD, abs=1e-6)


def test_min_costs_rank_has_no_transfers(hetero20):
    # load_image -> decode -> patch_embed -> ... -> v_proj -> score -> scale -> topk,
    # each at its shortest duration.
    chain = [1.2, 2.5, 0.30, 0.45, 0.60, 0.45, 0.60, 0.04, 0.02, 0.02, 0.01, 0.2]
    assert graph.upward_rank(hetero20, "min")[0] == pytest.approx(sum(chain))
    with pytest.raises(ValueError, match="unknown costs"):
        graph.upward_rank(hetero20, "max")


def test_heft_horizon_and_partitioners_share_the_rank(hetero20, monkeypatch):
    # The same function objects, not copies ...
    assert components.upward_rank is graph.upward_rank
    assert horizon.upward_rank is graph.upward_rank
    assert measures.upward_rank is graph.upward_rank
    assert measures.downward_rank is graph.downward_rank
    assert measures.mean_costs is graph.mean_costs
    assert partitioners.mean_costs is graph.mean_costs
    assert partitioners.total_rank is measures.total_rank
    assert partitioners.critical_path_tasks is measures.critical_path_tasks
    assert components.upward_rank_priority(hetero20) == graph.upward_rank(hetero20)
    # ... and each consumer reaches graph's mean costs when it ranks.
    calls = []
    real = graph.mean_costs

    def spy(problem):
        calls.append(problem)
        return real(problem)

    monkeypatch.setattr(graph, "mean_costs", spy)
    consumers = {
        "heft": lambda: components.upward_rank_priority(hetero20),
        "horizon": lambda: horizon.choose_horizon(hetero20, semantic_blocks(hetero20)),
        "critical_path": lambda: partitioners.critical_path(hetero20),
        "batch_split": lambda: partitioners.batch_split(hetero20),
        "mite": lambda: partitioners.mite(hetero20),
    }
    for name, run in consumers.items():
        calls.clear()
        run()
        assert calls, f"{name} does not rank with schedkit.problem.graph"


def test_critical_path_follows_the_upward_rank(hetero20, topcuoglu):
    for p in (hetero20, topcuoglu):
        up = graph.upward_rank(p)
        cost, comm = graph.mean_costs(p)
        path = measures.critical_path_tasks(p)
        assert up[path[0]] == max(up)
        edge_cost = {(i, j): c for (i, j, _), c in zip(p.edges, comm)}
        for i, j in zip(path, path[1:]):
            assert up[i] == pytest.approx(cost[i] + edge_cost[i, j] + up[j])
        assert not p.succs[path[-1]]
