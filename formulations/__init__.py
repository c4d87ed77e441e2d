"""Ready-made formulations (presets), registered with the kernel from the YAML files here.

Installed as ``schedkit.formulations`` (the folder ``formulations/`` beside the kernel, mapped by
``package-dir`` in ``pyproject.toml``). The kernel never imports it at module level: a
registry (``FORMULATIONS``) imports it the first time it is asked for a name it does not know
(``schedkit.registry.BUILTIN_PACKAGES``), and importing it registers what it holds.
"""

from importlib import resources

import yaml

from schedkit.semantics import register_formulation

for _file in sorted(resources.files(__name__).iterdir(), key=lambda f: f.name):
    if _file.name.endswith(".yaml"):
        _data = yaml.safe_load(_file.read_text())
        register_formulation(_data["name"], _data)
