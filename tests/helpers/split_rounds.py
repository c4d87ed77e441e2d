"""A split in rounds (``kedge``) run by hand, round by round, so that a test sees every round's parts."""

from schedkit.reductions import Part, run_parts


def run_rounds(chain, problem, method: str = "heft"):
    """Apply ``chain`` to ``problem``, solve each round's parts with ``method`` (in this
    process) until the split has no more; the parts of every round, the results of all
    of them (in order) and the last inverse data."""
    parts, inverse = chain.apply(problem)
    rounds, results = [parts], []
    while True:
        results += run_parts([Part.of(q, method) for q in parts])
        step = chain.advance(results, inverse)
        if step is None:
            return rounds, results, inverse
        parts, inverse = step
        rounds.append(parts)
