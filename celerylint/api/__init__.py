"""The parts of the rule API (``celerylint.rule`` re-exports them for rule authors): the checker
base classes (``rule``), what a checker is given (``context``, ``syntax``), what it declares
(``needles``, ``options``) and how it is tested (``cases``).
"""
