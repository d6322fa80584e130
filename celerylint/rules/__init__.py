"""One module per rule, and rules only: its documentation (the class
docstring), its cases, its checks and its fix.  A rule imports the framework
from ``celerylint.rule`` and shared analysis from ``celerylint.domain``,
never another rule.  Modules here are found by ``registry``; after adding or
changing one, run ``python -m celerylint.devtools``."""
