"""Fact collectors: checkers without a code of their own that record plain
data during the per-file traversal for the project rules (the Celery
configuration, tasks and their options, scheduled delays, task calls).
Modules here are found by ``registry`` like the rules."""
