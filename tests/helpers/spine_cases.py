"""A layered graph without chain cuts for the tests of the spine and its bound."""

from schedkit import Problem


def layers(kinds=("wide", "chain", "wide"), works=(2, 2, 2), skip: bool = True) -> Problem:
    """Layers between a fork and a join on two devices of equal speed: three tasks of 2 side
    by side (``wide``), or one after the other (``chain``); every edge moves data of 3. A
    skip edge of no data from the first task to the last leaves no chain cut inside."""
    tasks, edges, last = [{"name": "in", "work": 1}], [], "in"
    for k, (kind, work) in enumerate(zip(kinds, works)):
        names = [f"{t}{k}" for t in "xyz"]
        tasks += [{"name": t, "work": work} for t in names] + [{"name": f"join{k}", "work": 1}]
        steps = [(last, t) for t in names] + [(t, f"join{k}") for t in names] if kind == "wide" else \
            list(zip([last, *names], [*names, f"join{k}"]))
        edges += [{"src": a, "dst": b, "size": 3} for a, b in steps]
        last = f"join{k}"
    if skip:
        edges.append({"src": "in", "dst": last, "size": 0})
    return Problem.from_dict({"devices": [{"name": "a"}, {"name": "b"}],
                              "links": [{"src": "a", "dst": "b", "bandwidth": 1}],
                              "tasks": tasks, "edges": edges})
