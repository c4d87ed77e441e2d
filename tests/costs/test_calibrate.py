"""Calibration recovers a known roofline from a synthetic table, and keeps whole models honest."""

import sys

import numpy as np
import pytest

pytest.importorskip("scipy")

from schedkit.costs import CostTable  # noqa: E402
from schedkit.costs.calibrate import Roofline, calibrate_platform, fit_roofline, roofline_errors  # noqa: E402
from schedkit.errors import ProblemError, SchedkitError  # noqa: E402

TRUE = Roofline(peak_flops=8e10, memory_bandwidth=1.2e10, launch_overhead=4e-6)
START = Roofline(1.5e12, 1e11, 2e-6)   # a preset far from the truth


def synthetic(truth=TRUE, noise=0.0, seed=0, count=300, total=None, extra=()):
    """Nodes in every regime: compute-bound, memory-bound and overhead-bound (tiny)."""
    rng = np.random.default_rng(seed)
    flops = 10 ** rng.uniform(2, 9.5, count)
    moved = 10 ** rng.uniform(2, 8, count)
    seconds = truth.times(flops, moved) * np.exp(rng.normal(0, noise, count))
    nodes = [{"name": f"n{k}", "op_type": "Conv", "median": t * 1e3, "mean": t * 1e3, "p95": t * 1e3,
              "calls": 1, "flops": f, "bytes": b} for k, (f, b, t) in enumerate(zip(flops, moved, seconds))]
    nodes += list(extra)
    data = {"source": "onnxruntime", "runs": 3, "device": {"type": "cpu"}, "model": {"name": "synthetic"},
            "nodes": nodes}
    if total is not None:
        data["total"] = {"median": total, "mean": total}
    return CostTable.model_validate(data)


def ratios(found, truth=TRUE):
    return np.array(found.values()) / np.array(truth.values())


def test_exact_table_recovers_the_true_parameters():
    fit = fit_roofline(synthetic(), START)
    assert ratios(fit.after) == pytest.approx([1, 1, 1], rel=1e-3)
    assert fit.errors_after[0].median < 1e-3 and fit.errors_after[0].p90 < 1e-3
    assert fit.errors_before[0].median > 0.5
    assert fit.nodes == 300


def test_noisy_table_with_outliers_recovers_them_within_a_few_percent():
    slow = [{"name": f"slow{k}", "op_type": "LRN", "median": 5.0, "mean": 5.0, "p95": 5.0, "calls": 1,
             "flops": 1e3, "bytes": 1e3} for k in range(6)]   # kernels far slower than any roofline
    table = synthetic(noise=0.05, seed=3, extra=slow)
    fit = fit_roofline(table, START)
    assert ratios(fit.after) == pytest.approx([1, 1, 1], rel=0.1)
    assert fit.errors_after[0].median < 0.06


def test_the_whole_model_sum_is_kept_when_nodes_do_not_cancel():
    # Six slow kernels hold most of the time: a per-node fit alone would miss the sum by far.
    slow = [{"name": f"slow{k}", "op_type": "LRN", "median": 50.0, "mean": 50.0, "p95": 50.0, "calls": 1,
             "flops": 1e6, "bytes": 1e6} for k in range(6)]
    table = synthetic(noise=0.05, seed=4, extra=slow)
    fit = fit_roofline(table, START)
    errors = fit.errors_after[0]
    assert errors.predicted == pytest.approx(errors.measured, rel=0.15)
    assert abs(roofline_errors(table, fit.after).predicted - errors.predicted) < 1e-9


def test_fused_nodes_count_in_the_sum_but_not_per_node():
    fused = [{"name": "bn", "op_type": "BatchNormalization", "median": 0.0, "mean": 0.0, "p95": 0.0,
              "calls": 0, "flops": 1e3, "bytes": 1e3}]
    measured = synthetic(extra=fused)
    fit = fit_roofline(measured, START)
    assert fit.nodes == 300                         # the fused node has no time to fit
    assert ratios(fit.after) == pytest.approx([1, 1, 1], rel=0.02)
    tiny = TRUE.times(1e3, 1e3) * 1e3
    assert fit.errors_after[0].predicted == pytest.approx(fit.errors_after[0].measured + tiny, rel=0.01)


def test_the_time_outside_the_nodes_goes_into_the_launch_overhead():
    # 30 % of the run outside the nodes, shared by the 300 nodes that ran: the same time added
    # to every operator, which is exactly what the roofline's launch overhead is.
    node_sum = sum(n.median for n in synthetic().nodes)
    table = synthetic(total=node_sum * 1.3)
    fit = fit_roofline(table, START)
    share = 0.3 * node_sum / 300 * 1e-3
    assert fit.after.launch_overhead == pytest.approx(TRUE.launch_overhead + share, rel=1e-3)
    assert ratios(fit.after)[:2] == pytest.approx([1, 1], rel=1e-3)
    errors = fit.errors_after[0]
    assert errors.overhead == pytest.approx(0.3 * node_sum) and errors.total == pytest.approx(node_sum * 1.3)
    assert errors.predicted == pytest.approx(node_sum * 1.3, rel=1e-3) and errors.median < 1e-3


def test_a_paired_overhead_is_fitted_not_a_median_moved_by_load():
    # The unprofiled runs' median doubled by another process; the paired overhead says 1 %.
    node_sum = sum(n.median for n in synthetic().nodes)
    data = synthetic(total=node_sum * 2).model_dump()
    data["total"]["overhead"] = node_sum * 0.01
    fit = fit_roofline(CostTable.model_validate(data), START)
    assert fit.errors_after[0].predicted == pytest.approx(node_sum * 1.01, rel=1e-3)
    assert fit.errors_after[0].total == pytest.approx(node_sum * 2)


def test_calibrate_platform_changes_only_that_device():
    data = {"format": "schedkit-platform/v1", "name": "p", "time_unit": "ms",
            "devices": [{"name": "cpu0", "peak_flops": 1.5e12, "memory_bandwidth": 1e11, "memory": 8e9},
                        {"name": "cpu1", "peak_flops": 1.5e12, "memory_bandwidth": 1e11}],
            "links": [{"src": "cpu0", "dst": "cpu1", "bandwidth": 1e10}]}
    new, fit = calibrate_platform(data, synthetic(), "cpu0")
    assert new["devices"][1] == data["devices"][1] and new["links"] == data["links"]
    assert new["devices"][0]["memory"] == 8e9
    assert ratios(Roofline(new["devices"][0]["peak_flops"], new["devices"][0]["memory_bandwidth"],
                           new["devices"][0]["launch_overhead"])) == pytest.approx([1, 1, 1], rel=1e-3)
    assert data["devices"][0]["peak_flops"] == 1.5e12      # the input is not changed
    assert fit.before == Roofline(1.5e12, 1e11, 0.0)


def test_a_table_without_costs_cannot_be_fitted():
    table = CostTable.model_validate({"source": "onnxruntime", "runs": 1, "device": {"type": "cpu"},
                                      "model": {"name": "m"},
                                      "nodes": [{"name": "a", "op_type": "Relu", "median": 1, "mean": 1,
                                                 "p95": 1}]})
    with pytest.raises(ProblemError, match="t.json: no measured node with FLOPs or bytes"):
        fit_roofline(table, START, sources=["t.json"])


def test_missing_scipy_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)
    with pytest.raises(SchedkitError, match=r"'calibrate' extra: pip install 'schedkit\[calibrate\]'"):
        fit_roofline(synthetic(count=5), START)


def test_several_tables_fit_one_device_together():
    tables = [synthetic(seed=5, count=80), synthetic(seed=6, count=120)]
    fit = fit_roofline(tables, START)
    assert fit.nodes == 200 and len(fit.errors_after) == 2
    assert ratios(fit.after) == pytest.approx([1, 1, 1], rel=1e-3)
    assert all(e.median < 1e-3 for e in fit.errors_after)
