import uuid
from datetime import timedelta

import redis as rds
import requests
from celery import shared_task
from django.core.mail import send_mail

from .celery import app

r = rds.Redis(host="redis", port=6379, db=2)
PAYMENT_API = "https://payments.example.com/charges"


@shared_task(bind=True, autoretry_for=(Exception,), max_retries=5)
def charge_order(self, order_id, amount_cents):
    # A new key on every delivery: the payment provider can never deduplicate.
    idempotency_key = str(uuid.uuid4())
    if r.get(f"charged:{order_id}"):
        return "already charged"
    r.set(f"charged:{order_id}", 1)  # marked done before the charge happened
    requests.post(PAYMENT_API, json={"order": order_id, "amount": amount_cents},
                  headers={"Idempotency-Key": idempotency_key}, timeout=10)
    send_receipt.delay(order_id)


@app.task
def send_receipt(order_id):
    send_mail("Your receipt", f"Order {order_id}", "shop@example.com", ["customer@example.com"])


@app.task(soft_time_limit=900, time_limit=1200)
def nightly_export():
    lock_key = "lock:nightly-export"
    if not r.set(lock_key, "1", nx=True):
        return
    try:
        export_everything()
    finally:
        r.delete(lock_key)


def export_everything():
    with r.lock("export-files"):
        pass


def schedule_followups(order_id):
    send_receipt.apply_async((order_id,), countdown=timedelta(days=2).total_seconds())
    send_receipt.delay(order_id, countdown=60)
