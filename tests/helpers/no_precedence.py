"""A formulation that drops ``precedence`` (its edges order nothing) and an instance on which
that matters: four unit tasks in a chain on three devices take 4 along the edges, and 2 on two
devices under the formulation."""

NO_PRECEDENCE = {"name": "noprec", "blocks": ["assignment", "placement", "no_overlap", "memory"]}

CHAIN_OF_FOUR = {
    "devices": [{"name": d} for d in "abc"],
    "links": [{"src": u, "dst": v, "bandwidth": 1} for u, v in ("ab", "bc", "ac")],
    "tasks": [{"name": f"t{k}", "durations": {d: 1 for d in "abc"}} for k in range(4)],
    "edges": [{"src": f"t{k}", "dst": f"t{k + 1}", "size": 1} for k in range(3)]}
