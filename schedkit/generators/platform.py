"""Devices files (``schedkit-platform/v1``) for the ONNX importer: CPUs and GPUs from presets.

A platform lists each device's roofline (peak FLOP/s, memory bandwidth, launch overhead,
memory) and the links between devices, in physical units (see
:mod:`schedkit.importers.platform`). The presets are rounded public figures of common parts
(dense FP32 peak, memory bandwidth and size); GPUs of one model share a ``group`` (they are
interchangeable, which the ``symmetry`` block uses), and so do two CPUs of one model without
GPUs (with GPUs, the first CPU holds them).

Layout: every GPU hangs off the first CPU by PCIe 4.0 x16 (16 GB/s, 10 us); GPUs are joined
pairwise by ``gpu_link`` (NVLink-class 50 GB/s, or PCIe 16 GB/s, or ``none``: their data
then goes through the CPU); several CPUs are joined by a socket link (40 GB/s, 1 us).

:func:`nodes` writes a cluster of identical servers instead: ``nodes`` servers of ``gpus`` GPUs of
one model, named ``n{k}_gpu{j}``, each server's GPUs one ``group`` (interchangeable, for the
``symmetry`` block), joined inside a server by ``gpu_link`` and between servers by a slower
network. The network is a ``switch`` (the default): one device that runs no task, to which each
server is linked once (a group link, channel ``n{k}-nic``: one NIC per server, which sends or
receives one tensor at a time under ``congestion``), with the network's bandwidth and half its
latency, so that two GPUs of different servers communicate over the widest path through it
in the network's bandwidth and latency, as if linked directly. The file grows linearly:
128 servers of 8 GPUs take 256 links. ``network="pairs"`` links every pair of servers instead
(GPUDirect RDMA from every GPU to every GPU of the other server, the links between two
servers sharing one channel ``n{a}-n{b}``): the same transfer times, a channel per pair of
servers under ``congestion``, and 8,256 links for 128 servers.

Every device states its ``type`` (``cpu`` or ``gpu``, what cost tables name): a problem
written from the platform keys a duration by type where every device of the type has it.
Devices files carry no tasks: ``convert onnx --platform`` puts a model on them, and
``generate rwnn --platform`` a randomly wired network
(:meth:`~schedkit.importers.platform.Platform.retarget`).

Examples
--------
>>> data = platform(cpus=1, gpus=2, gpu_model="a100,t4")
>>> [(d["name"], d["peak_flops"]) for d in data["devices"]]
[('cpu', 1500000000000.0), ('gpu0', 19500000000000.0), ('gpu1', 8100000000000.0)]
>>> [(l["src"], l["dst"]) for l in data["links"]]
[('cpu', 'gpu0'), ('cpu', 'gpu1'), ('gpu0', 'gpu1')]
"""

from __future__ import annotations

import math
from typing import Any

from schedkit.errors import ProblemError
from schedkit.machine import ensure_fits

__all__ = ["platform", "nodes", "diviml", "GPU_MODELS", "CPU_MODELS", "GPU_LINKS", "NETWORK", "NETWORKS", "SWITCH",
           "PLATFORM_HEADER"]

#: GPU presets: peak FP32 FLOP/s, memory bandwidth (bytes/s), memory (bytes), launch overhead (s).
GPU_MODELS = {
    "a100": (1.95e13, 1.55e12, 40e9, 8e-6),
    "h100": (6.7e13, 3.35e12, 80e9, 8e-6),
    "v100": (1.57e13, 9.0e11, 32e9, 8e-6),
    "t4": (8.1e12, 3.2e11, 16e9, 8e-6),
    "l4": (3.03e13, 3.0e11, 24e9, 8e-6),
}
#: CPU presets, same fields.
CPU_MODELS = {
    "server": (1.5e12, 1.0e11, 64e9, 2e-6),
    "desktop": (6.0e11, 6.0e10, 32e9, 2e-6),
    "laptop": (2.0e11, 4.0e10, 16e9, 2e-6),
}
#: GPU-to-GPU links: bandwidth (bytes/s), latency (s); ``none`` routes through the CPU.
GPU_LINKS = {"nvlink": (5.0e10, 5e-6), "pcie": (1.6e10, 1e-5), "none": None}
_PCIE = (1.6e10, 1e-5)
#: Network between the servers of :func:`nodes`: 100 Gb/s (bytes/s) and 5 us, an InfiniBand or
#: RoCE NIC per server, slower than any GPU link inside a server.
NETWORK = (1.25e10, 5e-6)
#: How :func:`nodes` joins its servers: ``switch`` (linear in servers) or ``pairs`` (quadratic).
NETWORKS = ("switch", "pairs")
#: Name of the switch of :func:`nodes` (a device of its own: no server is spelled so).
SWITCH = "switch"
_SOCKET = (4.0e10, 1e-6)
#: Bytes a device or link row takes as data, as YAML text and as a parsed model: sizes whose
#: rows would not fit the memory free are refused before any is made.
ROW_BYTES = 2000

#: Comment block written above a generated devices file.
PLATFORM_HEADER = """\
# schedkit-platform/v1 devices file for 'schedkit convert onnx MODEL.onnx --platform FILE'
# and 'schedkit generate rwnn --platform FILE'.
# peak_flops in FLOP/s, memory_bandwidth in bytes/s, launch_overhead in seconds, memory in
# bytes; links: bandwidth in bytes/s, latency in seconds. An operator of F FLOPs moving B bytes
# takes launch_overhead + max(F / peak_flops, B / memory_bandwidth) on a device; the problem
# written from this file counts time in 'time_unit'.
"""


def _models(text: str, known: dict, what: str) -> list[str]:
    names = [m.strip().lower() for m in str(text).split(",") if m.strip()]
    for name in names:
        if name not in known:
            raise ProblemError(f"unknown {what} model '{name}' (known: {', '.join(sorted(known))})")
    if not names:
        raise ProblemError(f"give at least one {what} model")
    return names


def _device(name: str, preset: tuple, group: str | None, kind: str) -> dict:
    flops, bandwidth, memory, overhead = preset
    row: dict[str, Any] = {"name": name, "type": kind, "peak_flops": flops, "memory_bandwidth": bandwidth,
                           "launch_overhead": overhead, "memory": memory}
    if group:
        row["group"] = group
    return row


def platform(cpus: int = 1, gpus: int = 2, gpu_model: str = "a100", cpu_model: str = "server",
             gpu_link: str = "nvlink", time_unit: str = "ms", name: str | None = None) -> dict:
    """A devices file as data (see the module documentation).

    Parameters
    ----------
    cpus, gpus : int
        Device counts (at least one device in all).
    gpu_model : str
        A preset of :data:`GPU_MODELS`, or several separated by commas, used in turn
        (``"a100,t4"``: gpu0 an A100, gpu1 a T4, gpu2 an A100...).
    cpu_model : str
        A preset of :data:`CPU_MODELS` (or several, in turn).
    gpu_link : {"nvlink", "pcie", "none"}
        How GPUs are joined to each other.
    time_unit : {"ms", "s", "us"}
        Unit of time of the problems converted with this platform.
    name : str, optional
        Platform name (default ``cpu{C}_gpu{G}``).

    Returns
    -------
    dict
        ``schedkit-platform/v1`` data.

    Examples
    --------
    >>> [d["name"] for d in platform(cpus=2, gpus=0)["devices"]]
    ['cpu0', 'cpu1']
    >>> platform(gpus=1, gpu_model="b200")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: unknown GPU model 'b200' (known: a100, h100, l4, t4, v100)
    """
    for label, value in (("cpus", cpus), ("gpus", gpus)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ProblemError(f"{label}: needs an integer >= 0, got {value!r}")
    if cpus + gpus == 0:
        raise ProblemError("a platform needs at least one device (--cpus or --gpus)")
    if gpu_link not in GPU_LINKS:
        raise ProblemError(f"unknown GPU link '{gpu_link}' (known: {', '.join(GPU_LINKS)})")
    if gpus and gpu_link == "none" and not cpus:
        raise ProblemError("GPUs without a GPU link need a CPU to route through (--cpus >= 1)")
    if time_unit not in ("s", "ms", "us"):
        raise ProblemError(f"unknown time unit '{time_unit}' (s, ms or us)")
    pairs = gpus * (gpus - 1) // 2 if GPU_LINKS[gpu_link] is not None else 0
    ensure_fits(f"--cpus {cpus:,} --gpus {gpus:,}: {cpus + gpus:,} devices and {pairs + gpus + cpus:,} links",
                ROW_BYTES * (2 * (cpus + gpus) + pairs))
    gpu_names = _models(gpu_model, GPU_MODELS, "GPU") if gpus else []
    cpu_names = _models(cpu_model, CPU_MODELS, "CPU") if cpus else []
    devices, links = [], []
    cpu_ids = ["cpu"] if cpus == 1 else [f"cpu{k}" for k in range(cpus)]
    for k, device in enumerate(cpu_ids):
        model = cpu_names[k % len(cpu_names)]
        same = sum(1 for j in range(cpus) if cpu_names[j % len(cpu_names)] == model)
        # CPUs are interchangeable only as a lone pair: the GPUs hang off the first, and a
        # chain of three puts the middle one nearer to both others
        twins = same > 1 and cpus == 2 and not gpus
        devices.append(_device(device, CPU_MODELS[model], f"cpu-{model}" if twins else None, "cpu"))
    gpu_ids = [f"gpu{k}" for k in range(gpus)]
    for k, device in enumerate(gpu_ids):
        model = gpu_names[k % len(gpu_names)]
        same = sum(1 for j in range(gpus) if gpu_names[j % len(gpu_names)] == model)
        devices.append(_device(device, GPU_MODELS[model], f"gpu-{model}" if same > 1 else None, "gpu"))
    for a, b in zip(cpu_ids, cpu_ids[1:]):
        links.append({"src": a, "dst": b, "bandwidth": _SOCKET[0], "latency": _SOCKET[1]})
    for device in gpu_ids if cpus else []:
        links.append({"src": cpu_ids[0], "dst": device, "bandwidth": _PCIE[0], "latency": _PCIE[1]})
    if GPU_LINKS[gpu_link] is not None:
        bandwidth, latency = GPU_LINKS[gpu_link]
        for k, a in enumerate(gpu_ids):
            for b in gpu_ids[k + 1:]:
                links.append({"src": a, "dst": b, "bandwidth": bandwidth, "latency": latency})
    return {"format": "schedkit-platform/v1", "name": name or f"cpu{cpus}_gpu{gpus}",
            "time_unit": time_unit, "devices": devices, "links": links}


def nodes(nodes: int = 6, gpus: int = 4, gpu_model: str = "a100", gpu_link: str = "nvlink",
          network_bandwidth: float = NETWORK[0], network_latency: float = NETWORK[1],
          time_unit: str = "ms", name: str | None = None, network: str = "switch") -> dict:
    """A devices file of ``nodes`` identical servers of ``gpus`` identical GPUs (see the module text).

    Parameters
    ----------
    nodes : int
        Servers (>= 1).
    gpus : int
        GPUs per server (>= 1).
    gpu_model : str
        One preset of :data:`GPU_MODELS` for every GPU.
    gpu_link : {"nvlink", "pcie"}
        How the GPUs of one server are joined (each pair directly).
    network_bandwidth, network_latency : float
        The network between servers, bytes/s and seconds (default :data:`NETWORK`).
    time_unit : {"ms", "s", "us"}
        Unit of time of the problems written with it.
    name : str, optional
        Platform name (default ``nodes{N}x{G}``).
    network : {"switch", "pairs"}
        Servers each linked once to a switch (:data:`SWITCH`), or every pair of servers
        linked directly (see the module text).

    Returns
    -------
    dict
        ``schedkit-platform/v1`` data.

    Examples
    --------
    >>> data = nodes(nodes=2, gpus=2)
    >>> [(d["name"], d["type"], d["group"]) for d in data["devices"]][:3]
    [('n0_gpu0', 'gpu', 'n0'), ('n0_gpu1', 'gpu', 'n0'), ('n1_gpu0', 'gpu', 'n1')]
    >>> data["switches"], [(l["src"], l["dst"], l["latency"], l.get("channel")) for l in data["links"]]
    ([{'name': 'switch'}], [('n0', 'n0', 5e-06, None), ('n0', 'switch', 2.5e-06, 'n0-nic'), \
('n1', 'n1', 5e-06, None), ('n1', 'switch', 2.5e-06, 'n1-nic')])
    >>> [(l["src"], l["dst"], l.get("channel")) for l in nodes(nodes=2, gpus=2, network="pairs")["links"]]
    [('n0', 'n0', None), ('n0', 'n1', 'n0-n1'), ('n1', 'n1', None)]
    >>> nodes(gpu_link="none")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: gpu_link: 'none' is not a link between the GPUs of a server (nvlink or pcie)
    """
    for label, value in (("nodes", nodes), ("gpus", gpus)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ProblemError(f"{label}: needs an integer >= 1, got {value!r}")
    if GPU_LINKS.get(gpu_link) is None:
        raise ProblemError(f"gpu_link: {gpu_link!r} is not a link between the GPUs of a server (nvlink or pcie)")
    for label, value, positive in (("network_bandwidth", network_bandwidth, True),
                                   ("network_latency", network_latency, False)):
        if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0 or (positive and value == 0):
            raise ProblemError(f"{label}: needs a finite number {'> 0' if positive else '>= 0'}, got {value!r}")
    if time_unit not in ("s", "ms", "us"):
        raise ProblemError(f"unknown time unit '{time_unit}' (s, ms or us)")
    if network not in NETWORKS:
        raise ProblemError(f"network: {network!r} is not a way to join servers ({' or '.join(NETWORKS)})")
    models = _models(gpu_model, GPU_MODELS, "GPU")
    if len(set(models)) > 1:
        raise ProblemError(f"gpu_model: identical servers have one GPU model, got {gpu_model!r}")
    model = models[0]
    links_made = 2 * nodes if network == "switch" else nodes * (nodes + 1) // 2
    ensure_fits(f"--nodes {nodes:,} --gpus {gpus:,}: {nodes * gpus:,} devices and {links_made:,} links",
                ROW_BYTES * (nodes * gpus + links_made))
    names = [[f"n{k}_gpu{j}" for j in range(gpus)] for k in range(nodes)]
    devices = [_device(device, GPU_MODELS[model], f"n{k}", "gpu")
               for k, server in enumerate(names) for device in server]
    bandwidth, latency = GPU_LINKS[gpu_link]
    links = []
    # Server by server: its own GPUs, then the network. A group link stands for every pair of
    # GPUs it joins (same routes and channels as a link per pair; the list of channels is in
    # another order). A server of one GPU joins nothing inside.
    for k in range(nodes):
        if gpus > 1:
            links.append({"src": f"n{k}", "dst": f"n{k}", "bandwidth": bandwidth, "latency": latency})
        if network == "pairs":
            links += [{"src": f"n{k}", "dst": f"n{m}", "bandwidth": float(network_bandwidth),
                       "latency": float(network_latency), "channel": f"n{k}-n{m}"} for m in range(k + 1, nodes)]
        elif nodes > 1:  # (one server needs no network)
            # Half the latency on each of the two hops: the same sum as a direct link (halving
            # is exact in floating point, in seconds as in any time unit).
            links.append({"src": f"n{k}", "dst": SWITCH, "bandwidth": float(network_bandwidth),
                          "latency": float(network_latency) / 2, "channel": f"n{k}-nic"})
    data = {"format": "schedkit-platform/v1", "name": name or f"nodes{nodes}x{gpus}",
            "time_unit": time_unit, "devices": devices}
    if network == "switch" and nodes > 1:
        data["switches"] = [{"name": SWITCH}]
    data["links"] = links
    return data


def diviml(time_unit: str = "ms", name: str | None = None) -> dict:
    """DiviML's platform: an A100, a T4 and a server CPU, every pair on PCIe 4.0 x16 (25 GB/s, 10 us).

    DiviML's Table II gives the RWNN time of the T4 as 1.26x and the CPU's as 7.10x the
    A100's. The devices file states them as effective rates: the A100's preset peak FLOP/s,
    memory bandwidth and launch overhead, divided (the overhead multiplied) by 1.26 for the T4
    and 7.10 for the CPU, so that every operator's roofline time keeps those ratios (not the
    parts' datasheet figures). Memories: 40, 16 and 64 GB. The batch times of a workload of
    several inputs are in :mod:`schedkit.generators.diviml` (``generate rwnn --inputs``).

    Examples
    --------
    >>> data = diviml()
    >>> [(d["name"], round(data["devices"][0]["peak_flops"] / d["peak_flops"], 2)) for d in data["devices"]]
    [('a100', 1.0), ('t4', 1.26), ('cpu', 7.1)]
    """
    from schedkit.generators.diviml import DIVIML_DEVICES

    peak, bandwidth, _, overhead = GPU_MODELS["a100"]
    memory = {"a100": 40e9, "t4": 16e9, "cpu": 64e9}
    devices = [{"name": device, "peak_flops": peak / slowness, "memory_bandwidth": bandwidth / slowness,
                "launch_overhead": overhead * slowness, "memory": memory[device]}
               for device, slowness, _ in DIVIML_DEVICES]
    names = [d["name"] for d in devices]
    links = [{"src": a, "dst": b, "bandwidth": 2.5e10, "latency": 1e-5}
             for k, a in enumerate(names) for b in names[k + 1:]]
    return {"format": "schedkit-platform/v1", "name": name or "diviml", "time_unit": time_unit,
            "devices": devices, "links": links}
