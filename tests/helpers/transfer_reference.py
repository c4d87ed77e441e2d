"""A schedule's transfers checked against the semantics of ``congestion``, written from the
semantics and not from the blocks: the reference of the timing engines' and the methods' tests."""

from schedkit.numerics import time_tolerance


def congestion_errors(problem, schedule, resource):
    """Reference check of a schedule's transfers under ``congestion: {resource}``."""
    rows = {r.task: r for r in schedule.tasks}
    moves = {(t.src, t.dst): t for t in schedule.transfers}
    tol = time_tolerance(schedule.makespan)
    errors, held = [], {}
    for i, j, size in problem.edges:
        a, b = rows[problem.tasks[i]], rows[problem.tasks[j]]
        u, v = problem.device_index[a.device], problem.device_index[b.device]
        needed = u != v and size > 0 and problem.comm_time(size, u, v) > 0
        t = moves.get((a.task, b.task))
        if not needed:
            if t is not None:
                errors.append(f"{a.task}->{b.task}: a row for no transfer")
            elif b.start < a.end - tol:
                errors.append(f"{a.task}->{b.task}: starts before its input")
            continue
        if t is None:
            errors.append(f"{a.task}->{b.task}: missing")
            continue
        if t.start < a.end - tol or t.end > b.start + tol:
            errors.append(f"{a.task}->{b.task}: outside [{a.end}, {b.start}]")
        if abs(t.end - t.start - problem.comm_time(size, u, v)) > tol:
            errors.append(f"{a.task}->{b.task}: lasts {t.end - t.start}")
        if t.route != list(problem.route[u][v]):
            errors.append(f"{a.task}->{b.task}: route {t.route}")
        names = list(set(problem.route[u][v])) if resource in ("channel", "both") else []
        if resource in ("port", "both"):
            names += [f"{a.device}:send", f"{b.device}:receive"]
        for name in names:
            held.setdefault(name, []).append((t.start, t.end, a.task, b.task))
    for name, spans in held.items():
        spans.sort()
        for first, second in zip(spans, spans[1:]):
            if second[0] < first[1] - tol:
                errors.append(f"{name}: {first[2:]} and {second[2:]} overlap")
    return errors
