"""A three-task chain of 8 inputs on two batching GPUs and a CPU, shared by the batched
heuristics' tests and the ``batching`` block's."""

# Two GPUs whose batches of 4 take 1.5x a single input, a CPU that takes 3 per input.
CHAIN = {"name": "chain", "workload": {"inputs": 8},
         "devices": [{"name": "gpu0", "batch_sizes": [1, 2, 4]}, {"name": "gpu1", "batch_sizes": [1, 2, 4]},
                     {"name": "cpu"}],
         "links": [{"src": "gpu0", "dst": "gpu1", "bandwidth": 4}, {"src": "gpu0", "dst": "cpu", "bandwidth": 1},
                   {"src": "gpu1", "dst": "cpu", "bandwidth": 1}],
         "tasks": [{"name": t, "durations": {"gpu0": {1: 1, 2: 1.2, 4: 1.5}, "gpu1": {1: 1, 2: 1.2, 4: 1.5},
                                             "cpu": 3}} for t in "abc"],
         "edges": [{"src": "a", "dst": "b", "size": 1}, {"src": "b", "dst": "c", "size": 1}]}
