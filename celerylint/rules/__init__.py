"""One module per rule: its documentation (the class docstring), its cases,
its checks and its fix.  Modules here are found by ``registry``; after adding
or changing one, run ``python -m celerylint.devtools``."""
