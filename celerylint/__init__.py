"""celerylint: find the Celery patterns that make tasks run twice or vanish."""

__version__ = "0.1.0"
