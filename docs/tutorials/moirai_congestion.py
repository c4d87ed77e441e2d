"""Tutorial: MOIRAI's example-1 with and without congestion, and the transfers per port and channel.

Needs the ``moirai`` extra (``xlrd``) for the conversion. Run from the repository root:
``python docs/tutorials/moirai_congestion.py`` (a few seconds). Times depend on the machine
and its load.
"""

import json
from pathlib import Path

TOL = 1e-9

# [convert]
from schedkit import Problem, solve
from schedkit.importers import convert

data = convert("moirai", "data/moirai/example-1.xls")   # schedkit/v1 problem data
p = Problem.from_dict(data)
moving = [(p.tasks[i], p.tasks[j]) for i, j, size in p.edges if size > 0]
print(p, p.devices)
print(f"{len(p.tasks)} tasks (t0 is MOIRAI's virtual source), {len(p.devices)} devices, "
      f"{len(p.edges)} edges, {len(moving)} of them carry data")
# [/convert]

# The converted data is the file shipped in examples/.
assert data == json.loads(Path("examples/moirai_example1.json").read_text())
assert (len(p.tasks), len(p.devices), len(p.edges), len(moving)) == (14, 3, 19, 11)

# [solve]
# HiGHS on one thread returns the same optimum on every run (there are several of 30).
exact = {"solver": "highs", "threads": 1}
latency = solve(p, "milp", formulation="latency", **exact)   # transfers are delays inside precedence
moirai = solve(p, "milp", formulation="moirai", **exact)     # transfers wait for the devices' ports
print(f"{'formulation':12} {'status':>8} {'makespan':>9} {'bound':>6} {'seconds':>8}")
for name, s in (("latency", latency), ("moirai", moirai)):
    print(f"{name:12} {s.status:>8} {s.makespan:9g} {s.bound:6g} {s.solve_seconds:8.2f}")
# [/solve]

for s in (latency, moirai):
    assert s.status == "optimal" and abs(s.bound - s.makespan) < 1e-6
assert moirai.makespan >= latency.makespan - TOL    # congestion only adds constraints
assert moirai.makespan == latency.makespan == 30    # here it costs nothing; the sheet's schedule: 31

# [judge]
from schedkit.blocks import Congestion

ports = Congestion(resource="port")
for name, s in (("latency", latency), ("moirai", moirai)):
    found = ports.violations(p, s)
    print(f"{name}: {len(found)} port conflict(s)")
    for message in found:
        print("   ", message)
# [/judge]

latency_conflicts = ports.violations(p, latency)
assert latency_conflicts, "the latency schedule should send two transfers from one port at once"
assert ports.violations(p, moirai) == []

# [changes]
before = {r.task: r for r in latency.tasks}
for r in moirai.tasks:
    was = before[r.task]
    if (was.device, was.start) != (r.device, r.start):
        print(f"task {r.task}: {was.device} at {was.start:g} -> {r.device} at {r.start:g}")
sent = {(t.src, t.dst): t for t in latency.transfers}
for t in moirai.transfers:
    was = sent[t.src, t.dst]
    if was.start != t.start:
        print(f"transfer {t.src}->{t.dst}: [{was.start:g}, {was.end:g}) -> [{t.start:g}, {t.end:g})")
# [/changes]


# [listing]
def holders(problem, schedule, kind):
    """For each resource (``kind``: port, channel or both), the transfers that hold it, by start."""
    out = {}
    for t in schedule.transfers:
        u, v = problem.device_index[t.from_], problem.device_index[t.to]
        for name in problem.occupies(u, v, kind):
            out.setdefault(name, []).append(t)
    return {name: sorted(rows, key=lambda t: (t.start, t.end)) for name, rows in sorted(out.items())}


def gantt(problem, schedule, kind, only=None, width=60):
    """Print the transfers per resource: ``[start, end)  src->dst  (from->to)`` and a bar."""
    step = schedule.makespan / width                 # time per column
    ticks = [round(c * step, 6) for c in range(0, width, 10)]
    print(f"{kind}s, {schedule.method}:".ljust(36) + "".join(f"{t:<10g}" for t in ticks)
          + f"{schedule.makespan:g}")
    for name, rows in holders(problem, schedule, kind).items():
        if only is None or name in only:
            print(f"  {name}")
            for t in rows:
                first, last = round(t.start / step), round(t.end / step)
                bar = "." * first + "#" * max(1, last - first)
                label = f"[{t.start:2g}, {t.end:2g})  {t.src + '->' + t.dst:9} ({t.from_}->{t.to})"
                print(f"    {label:32}{bar:.<{width}}|")


gantt(p, moirai, "port")
gantt(p, moirai, "channel")
# [/listing]

# The point of congestion: on every port and every channel, one transfer at a time.
for kind in ("port", "channel"):
    for name, rows in holders(p, moirai, kind).items():
        assert all(a.end <= b.start + TOL for a, b in zip(rows, rows[1:])), (kind, name)
# A transfer holds the send port of its source's device and the receive port of its consumer's.
assert p.occupies(p.device_index["d1"], p.device_index["d2"], "both") == ("d1->d2", "d1:send", "d2:receive")

# [conflict]
busy = [name for name, rows in holders(p, latency, "port").items()
        if any(a.end > b.start + TOL for a, b in zip(rows, rows[1:]))]   # two at once
gantt(p, latency, "port", only=busy)
# [/conflict]

assert busy and all(any(name in message for message in latency_conflicts) for name in busy)

# [heft]
heft_latency = solve(p, "heft", formulation="latency")
heft_moirai = solve(p, "heft", formulation="moirai")
for s in (heft_latency, heft_moirai):
    print(f"{s.summary()} (formulation {s.formulation['name']})")
    for message in ports.violations(p, s):
        print("   ", message)

print(f"{'method':18} {'latency':>8} {'conflicts':>9} {'moirai':>7} {'conflicts':>9}")
heuristics = {}
for method in ("heft", "met", "greedy", "critical_path+pct", "mite+msr"):
    a, b = solve(p, method, formulation="latency"), solve(p, method, formulation="moirai")
    heuristics[method] = (a, b)
    print(f"{method:18} {a.makespan:8g} {len(ports.violations(p, a)):9} "
          f"{b.makespan:7g} {len(ports.violations(p, b)):9}")
# [/heft]

assert ports.violations(p, heft_latency)            # HEFT ignores the ports unless told
assert ports.violations(p, heft_moirai) == []       # ... and honours them under moirai
for method, (a, b) in heuristics.items():
    assert ports.violations(p, b) == [] and b.violations(p) == [], method
    assert b.formulation["name"] == "moirai", method
    assert min(a.makespan, b.makespan) >= moirai.makespan - TOL, method   # none beats the optimum
