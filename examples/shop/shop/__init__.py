from .celery import app

__all__ = ("app",)
