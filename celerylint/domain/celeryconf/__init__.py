"""The Celery configuration model: what each app's settings are, and where.

Collectors (``celerylint/facts/``) record plain facts during the
per-file traversal; ``model.build`` puts them together the way Celery does
(constructor and ``app.conf`` first, then the ``config_from_object`` source
with its namespace, then Celery's defaults), and the CL1xx rules judge it.
"""
