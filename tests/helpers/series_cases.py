"""A chain of modules alike for the tests of the series search."""

from schedkit import Problem


def chain_of_four(grow: int = 0, diamonds: int = 4) -> Problem:
    """Four diamonds (or ``diamonds``) in a row on three devices: transfers that queue for
    ports; ``grow``: the middle tasks of diamond ``k`` run ``grow * k`` longer on d0."""
    devices = [{"name": f"d{k}"} for k in range(3)]
    links = [{"src": f"d{u}", "dst": f"d{v}", "bandwidth": 2} for u in range(3) for v in range(u + 1, 3)]
    tasks, edges = [{"name": "a0", "durations": {"d0": 1, "d1": 2, "d2": 2}}], []
    for k in range(diamonds):
        for j, (x, y, z) in enumerate([(3, 4, 5), (4, 3, 5), (5, 5, 3)]):
            tasks.append({"name": f"m{k}{j}", "durations": {"d0": x + grow * k, "d1": y, "d2": z}})
            edges += [{"src": f"a{k}", "dst": f"m{k}{j}", "size": 1 + j},
                      {"src": f"m{k}{j}", "dst": f"a{k + 1}", "size": 2}]
        tasks.append({"name": f"a{k + 1}", "durations": {"d0": 1, "d1": 1, "d2": 2}})
    return Problem.from_dict({"devices": devices, "links": links, "tasks": tasks, "edges": edges})
