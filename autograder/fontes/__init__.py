"""Fontes em texto dos notebooks do nbgrader.

Cada módulo `capNN.py` define `build() -> autograder.nbbuild.Notebook`.
`python -m autograder.fontes` reescreve solutions/<slug>/<slug>.ipynb a partir
deles; `make release` faz isso e depois gera exercises/ com o nbgrader.
"""

import importlib
import pkgutil


def modules():
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("cap"):
            yield importlib.import_module(f"{__name__}.{info.name}")


def build_all():
    return [m.build().save() for m in modules()]
