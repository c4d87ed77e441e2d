"""Every docstring example of schedkit runs (doctest), from the repository root.

Doctests run in a child process: some examples register blocks or methods, which
must not leak into the registries the other tests inspect.
"""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

RUNNER = r"""
import doctest, importlib, json, pkgutil, signal, sys
# (schedkit.interrupt's examples send SIGINT as Ctrl-C would: a run launched in the
# background inherits it ignored, and Python then raises nothing)
signal.signal(signal.SIGINT, signal.default_int_handler)
import schedkit
import schedkit.formulations, schedkit.heuristics, schedkit.decompositions

names = set()
# The built-in packages live in their own folders (package-dir): walk each one.
for package in (schedkit, schedkit.formulations, schedkit.heuristics, schedkit.decompositions):
    names.add(package.__name__)
    names.update(m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
                 if not m.name.endswith(".__main__"))
names = sorted(names)
report = {"modules": [], "failed": {}, "attempted": 0}
for name in names:
    try:
        module = importlib.import_module(name)
    except Exception as exc:
        report["failed"][name] = f"import failed: {exc!r}"
        continue
    report["modules"].append(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                             verbose=False, report=True)
    report["attempted"] += result.attempted
    if result.failed:
        report["failed"][name] = f"{result.failed} of {result.attempted} examples failed"
print("REPORT " + json.dumps(report))
"""


def test_every_module_doctest_passes():
    done = subprocess.run([sys.executable, "-c", RUNNER], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("REPORT ")), None)
    assert line is not None, f"doctest runner crashed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    report = json.loads(line[len("REPORT "):])
    for package in ("schedkit.heuristics", "schedkit.formulations", "schedkit.decompositions",
                    "schedkit.blocks.base", "schedkit.problem.spec", "schedkit.milp.export"):
        assert package in report["modules"]
    assert report["attempted"] > 20
    failed = report["failed"]
    assert not failed, "doctest failures:\n" + "\n".join(f"  {k}: {v}" for k, v in failed.items()) \
        + "\n" + done.stdout[-4000:]
