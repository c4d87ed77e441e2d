"""Hypothesis strategy: small random problems with pins, memory, collocation and sparse links.

Imported by the tests next to it (pytest puts this folder on ``sys.path``).
"""

from hypothesis import strategies as st


@st.composite
def problem_data(draw, max_tasks: int = 9, max_devices: int = 4) -> dict:
    """``schedkit/v1`` data; building a Problem from it may raise ProblemError."""
    n = draw(st.integers(1, max_tasks))
    m = draw(st.integers(1, max_devices))
    names = [f"d{k}" for k in range(m)]
    devices = []
    for name in names:
        row = {"name": name, "speed": draw(st.sampled_from([0.5, 1.0, 2.0, 4.0]))}
        if draw(st.integers(0, 3)) == 0:
            row["memory"] = draw(st.sampled_from([2.0, 4.0, 8.0, 16.0]))
        devices.append(row)
    links = []
    for u in range(m):
        for v in range(u + 1, m):
            if draw(st.integers(0, 4)) > 0:   # most pairs linked, some not
                links.append({"src": names[u], "dst": names[v],
                              "bandwidth": draw(st.sampled_from([0.5, 1.0, 4.0])),
                              "latency": draw(st.sampled_from([0.0, 0.25]))})
    tasks = []
    for i in range(n):
        row = {"name": f"t{i}", "memory": draw(st.sampled_from([0.0, 0.0, 1.0, 2.0, 3.0]))}
        if draw(st.booleans()):
            row["work"] = draw(st.sampled_from([0.0, 1.0, 2.0, 5.0]))
        else:
            subset = draw(st.lists(st.sampled_from(names), min_size=1, max_size=m, unique=True))
            row["durations"] = {d: draw(st.sampled_from([0.5, 1.0, 3.0])) for d in subset}
        if draw(st.integers(0, 4)) == 0:
            row["pin"] = draw(st.lists(st.sampled_from(names), min_size=1, max_size=m, unique=True))
        group = draw(st.sampled_from([None, None, None, "g0", "g1"]))
        if group is not None:
            row["colocate"] = group
        row["output_size"] = draw(st.sampled_from([0.0, 1.0, 3.0]))
        tasks.append(row)
    edges = [{"src": f"t{i}", "dst": f"t{j}"}
             for j in range(n) for i in range(j) if draw(st.integers(0, 2)) == 0]
    return {"name": "random", "devices": devices, "links": links, "tasks": tasks, "edges": edges}
