"""Plain data and text every layer shares: findings and edits (``model``), reading and decoding
source (``source``), module names (``modules``), the bounded directory walk (``walk``).
Nothing here imports another part of celerylint or libcst.
"""
