from datetime import timedelta

from django.utils import timezone

from .tasks import charge_order, send_receipt


def checkout(request, order):
    charge_order.delay(order.id, order.total_cents)
    reminder_at = timezone.now() + timedelta(hours=48)
    send_receipt.apply_async((order.id,), eta=reminder_at)
