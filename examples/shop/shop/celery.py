from celery import Celery

app = Celery("shop")
app.config_from_object("shop.celeryconfig")
app.autodiscover_tasks(["shop"])
