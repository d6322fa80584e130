"""Shared static analysis for rules: values, Redis clients, Celery tasks."""
