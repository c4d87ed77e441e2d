"""Ready-made formulations (presets), registered with the kernel from the YAML files here."""

from importlib import resources

import yaml

from schedkit.semantics import register_formulation

for _file in sorted(resources.files(__name__).iterdir(), key=lambda f: f.name):
    if _file.name.endswith(".yaml"):
        _data = yaml.safe_load(_file.read_text())
        register_formulation(_data["name"], _data)
