"""Benchmark the real GPU profiles (issue 31, items 4 and 7): H200 traces as cost tables.

(a) ResNet-50, float32, batch 1, measured on an NVIDIA H200 (``tests/data/gpu-profiles``):
    the trace imported onto the light ResNet-50's nodes with the measured unprofiled latency
    (``resnet50_h200.ops.json``), an H200 device from its data-sheet peaks calibrated against
    that table, the roofline's error before and after (median and p90 of
    ``|log(predicted / measured)|`` per node, whole model), and the calibrated device's
    predicted single-device latency of the light ResNet-50 (every node on it: the sum of its
    durations) against the measured 4.45 ms (target: within 15 %).
(b) The GPT-style training trace: its ``record_function`` ranges (forward, backward, each
    layer's attention and MLP), with host time and the GPU time of the kernels launched
    inside each, and its operator table.

The table's times are anchored to the measured latency (one factor on the host times,
:mod:`schedkit.costs.trace_table`), so (a)'s whole-model figure checks that the calibrated
roofline reproduces the measured latency on the model ``convert onnx`` builds; the per-node
errors say how well one roofline fits the nodes.

Usage::

    python benchmarks/costs_gpu.py              # prints both; --json FILE writes every figure
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

from schedkit.atomic import write_text_atomic
from schedkit.costs.calibrate import Roofline, fit_roofline
from schedkit.costs.trace_table import ops_latency, trace_table
from schedkit.costs.traces import read_trace

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "gpu-profiles"
#: NVIDIA H200 SXM data sheet: 494 TFLOP/s dense TF32 (the float32 run's convolutions use
#: TF32), 4.8 TB/s HBM3e, 141 GB; the generator's 8 us launch overhead for GPUs.
H200 = {"name": "h200", "peak_flops": 4.94e14, "memory_bandwidth": 4.8e12, "memory": 141e9,
        "launch_overhead": 8e-6}


def light_resnet50() -> Path:
    import onnx

    return Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / "light_resnet50.onnx"


def single_device_latency(model: Path, device: dict) -> float:
    """ms: every operator of ``model`` on ``device`` back to back (one device, one task at a time)."""
    from schedkit.importers.onnx import Onnx

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the light model's unknown shapes, said elsewhere
        data = Onnx().read(model, platform={"devices": [device]})
    return sum(task["durations"][device["name"]] for task in data["tasks"])


def resnet(results: dict) -> None:
    trace_path = DATA / "resnet50_h200_float32_b1.trace.json"
    latency, _ = ops_latency(DATA / "resnet50_h200.ops.json", str(trace_path))
    started = time.perf_counter()
    trace = read_trace(trace_path)
    made = trace_table(trace, model=light_resnet50(), latency_ms=latency)
    seconds = time.perf_counter() - started
    table = made.table
    kernels = sum(c.gpu for c in trace.calls) / 1e3
    host = sum(c.host for c in trace.calls) / 1e3
    print(f"ResNet-50 float32 b1 on {trace.device}: {len(trace.calls)} operator calls, "
          f"{len(table.nodes)} nodes matched ({', '.join(made.unmatched_nodes) or 'none'} not run), "
          f"imported in {seconds:.2f} s")
    print(f"  kernels {kernels:.3f} ms, host calls under the profiler {host:.3f} ms, "
          f"measured unprofiled {latency:.3f} ms: host scale s = {made.scale:.3f}")
    fit = fit_roofline(table, Roofline(H200["peak_flops"], H200["memory_bandwidth"],
                                       H200["launch_overhead"]), [str(trace_path)])
    model = light_resnet50()
    before = single_device_latency(model, H200)
    calibrated = dict(H200, peak_flops=fit.after.peak_flops,
                      memory_bandwidth=fit.after.memory_bandwidth,
                      launch_overhead=fit.after.launch_overhead)
    after = single_device_latency(model, calibrated)
    print(f"  {'roofline':<11} {'peak TFLOP/s':>12} {'TB/s':>6} {'launch us':>9} "
          f"{'median':>7} {'p90':>6} {'model ms':>9}")
    for label, roof, errors, whole in (("data sheet", fit.before, fit.errors_before[0], before),
                                       ("calibrated", fit.after, fit.errors_after[0], after)):
        print(f"  {label:<11} {roof.peak_flops / 1e12:>12.3g} {roof.memory_bandwidth / 1e12:>6.3g} "
              f"{roof.launch_overhead * 1e6:>9.3g} {errors.median:>7.3f} {errors.p90:>6.3f} "
              f"{whole:>9.3f}")
    error = after / latency - 1
    print(f"  predicted single-device latency {after:.3f} ms vs measured {latency:.3f} ms: "
          f"{error:+.1%} ({'within' if abs(error) <= 0.15 else 'OUTSIDE'} the 15 % target)")
    results["resnet50_float32_b1"] = {
        "calls": len(trace.calls), "nodes": len(table.nodes), "unmatched": made.unmatched_nodes,
        "kernels_ms": kernels, "host_ms": host, "measured_ms": latency, "scale": made.scale,
        "import_seconds": seconds, "before": {**vars(fit.errors_before[0]), "model_ms": before,
                                              "roofline": vars(fit.before)},
        "after": {**vars(fit.errors_after[0]), "model_ms": after, "roofline": vars(fit.after)},
        "relative_error": error}


def gpt(results: dict) -> None:
    trace_path = DATA / "gpt4x1024_h200_bf16.trace.json"
    step, steps = ops_latency(DATA / "gpt4x1024_h200_bf16.ops.json", str(trace_path))
    trace = read_trace(trace_path)
    made = trace_table(trace, latency_ms=step, runs=steps)
    table = made.table
    print(f"\nGPT 4x1024 bf16 training, {steps} steps: {len(trace.calls)} top-level operator "
          f"calls of {len(table.nodes)} operators; kernels {trace.gpu_total / 1e3:.3f} ms in all; "
          f"per step {made.profiled_ms:.3f} ms profiled, {step:.3f} ms unprofiled: host scale "
          f"s = {made.scale:.3f}")
    print(f"  {'range':<18} {'calls':>5} {'host ms':>8} {'GPU ms':>7}")
    for r in trace.ranges.values():
        print(f"  {r.name:<18} {r.calls:>5} {r.cpu / 1e3:>8.3f} {r.gpu / 1e3:>7.3f}")
    results["gpt4x1024_bf16"] = {"calls": len(trace.calls), "operators": len(table.nodes),
                                 "kernels_ms": trace.gpu_total / 1e3, "step_ms": step,
                                 "profiled_step_ms": made.profiled_ms, "scale": made.scale,
                                 "ranges": {n: vars(r) for n, r in trace.ranges.items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    args = parser.parse_args(argv)
    results: dict = {}
    resnet(results)
    gpt(results)
    if args.json:
        write_text_atomic(args.json, json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
