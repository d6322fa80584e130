"""More cases of CL216 (``cl216_dispatch_in_outer_transaction.py``)."""

from ..rule import Invalid, Valid, django_project

_ATOMIC = """
    DATABASES = {"default": {"ENGINE": "django.db.backends.postgresql", "ATOMIC_REQUESTS": True}}
    CELERY_BROKER_URL = "redis://localhost:6379/0"
"""

VALID = (
    Valid(django_project("""
        DATABASES = {"default": {"ENGINE": "django.db.backends.postgresql"}}
        CELERY_BROKER_URL = "redis://localhost:6379/0"
    """, extra="""
        # file: proj/views.py
        from proj.tasks import notify
        def checkout(request):
            notify.delay(request.user.pk)
    """)),
    Valid(django_project("""
        import os
        DATABASES = {"default": {"ATOMIC_REQUESTS": os.environ.get("ATOMIC") == "1"}}
        CELERY_BROKER_URL = "redis://localhost:6379/0"
    """, extra="""
        # file: proj/views.py
        from proj.tasks import notify
        def checkout(request):
            notify.delay(1)
    """)),
    Valid(django_project(_ATOMIC, extra="""
        # file: proj/views.py
        # not views: async, non-atomic, middleware, deferred, a helper without request
        from django.db import transaction
        from django.views import View
        from proj.tasks import notify
        async def stream(request):
            notify.delay(1)
        @transaction.non_atomic_requests
        def webhook(request):
            notify.delay(2)
        class AuditMiddleware:
            def __init__(self, get_response):
                self.get_response = get_response
            def __call__(self, request):
                notify.delay(3)
                return self.get_response(request)
        class Checkout(View):
            def post(self, request):
                transaction.on_commit(lambda: notify.delay(4))
        def helper(order):
            notify.delay(5)
    """)),
    Valid(django_project(_ATOMIC, extra="""
        # views that only read, send and answer: no write for the task to miss or to roll back
        # file: proj/views.py
        from django.contrib import messages
        from django.shortcuts import get_object_or_404, redirect
        from django.urls import reverse
        from rest_framework.response import Response
        from proj.models import Report
        from proj.tasks import rebuild, resync
        class Resync(View):
            def post(self, request):
                missing_only = request.POST.get("missing_only", False)
                resync.apply_async(kwargs={"missing_only": missing_only})
                messages.success(request, "Resyncing.")
                return redirect(reverse("commands"))
        def rebuild_report(request, pk):
            report = get_object_or_404(Report.objects.filter(active=True), pk=pk)
            if not report.sections.exists():
                raise Http404("empty")
            task = rebuild.delay(report.pk)
            return Response({"task": task.id})
    """)),
    Valid("""
        # ATOMIC_REQUESTS set only in a test settings module
        # file: tests/settings.py
        DATABASES = {"default": {"ATOMIC_REQUESTS": True}}
        # file: proj/views.py
        def checkout(request):
            notify.delay(1)
    """),
    Valid("""
        # a handler-shaped function that no model signal is connected to
        # file: proj/handlers.py
        def on_login(sender, user, **kwargs):
            audit.delay(user.pk)
        # file: proj/apps.py
        from django.contrib.auth.signals import user_logged_in
        from proj.handlers import on_login
        user_logged_in.connect(on_login)
    """),
    Valid("""
        # a post_save handler connected in another module: no settings module sets ATOMIC_REQUESTS
        # file: proj/handlers.py
        def on_order_saved(sender, instance, created, **kwargs):
            index.delay(instance.pk)
        # file: proj/apps.py
        from django.db.models.signals import post_save
        from proj.handlers import on_order_saved
        post_save.connect(on_order_saved, sender="orders.Order")
    """),
    Valid("""
        # an admin hook of a class that is not a ModelAdmin; a receiver of another signal
        from django.dispatch import receiver
        from django.core.signals import request_finished
        class Exporter:
            def save_model(self, request, obj, form, change):
                export.delay(obj.pk)
        @receiver(request_finished)
        def done(sender, **kwargs):
            flush.delay()
    """),
    Valid("""
        # atomic look-alikes: a function only called outside atomic, a name rebound, a method
        from django.db import transaction
        def send(order):
            notify.delay(order.pk)
        def flow(order):
            send(order)
            with transaction.atomic():
                send = other
                send(order)
        class Service:
            @transaction.atomic
            def run(self, order):
                self.send(order)
            def send(self, order):
                notify.delay(order.pk)
    """),
    Valid(django_project(_ATOMIC, extra="""
        # look-alikes: an async ninja-extra operation, a `route` of another library, a method
        # connected to a signal of the project, a method another class connects
        # file: proj/api.py
        from ninja_extra import api_controller, route
        from proj.routing import route as own_route
        from proj.tasks import notify
        @api_controller("/orders")
        class Orders:
            @route.post("/{pk}")
            async def submit(self, pk: int):
                notify.delay(pk)
            @own_route.post("/{pk}/again")
            def again(self, pk: int):
                notify.delay(pk)
        # file: proj/search.py
        from django.db.models import signals
        from proj.signals import order_archived
        class Indexer:
            def setup(self, other):
                order_archived.connect(self.handle_archive)
                signals.post_delete.connect(other.handle_delete)
            def handle_archive(self, sender, instance, **kwargs):
                unindex.delay(instance.pk)
            def handle_delete(self, sender, instance, **kwargs):
                unindex.delay(instance.pk)
    """)),
)

INVALID = (
    Invalid(django_project(_ATOMIC, extra="""
        # file: proj/views.py
        from django.db import transaction
        from django.views.generic.edit import CreateView
        from rest_framework.viewsets import ModelViewSet
        from proj.orders import place
        from proj.tasks import notify
        def checkout(request, pk):
            place(request.user, pk)
            notify.delay(pk)
        class OrderCreate(CreateView):
            def form_valid(self, form):
                notify.apply_async((form.instance.pk,))
                return super().form_valid(form)
        class Orders(ModelViewSet):
            def perform_create(self, serializer):
                serializer.save()
                for line in serializer.validated_data["lines"]:
                    notify.delay(line)
    """), count=3, message="ATOMIC_REQUESTS = True", fixed=django_project(_ATOMIC, extra="""
        # file: proj/views.py
        from django.db import transaction
        from django.views.generic.edit import CreateView
        from rest_framework.viewsets import ModelViewSet
        from proj.orders import place
        from proj.tasks import notify
        def checkout(request, pk):
            place(request.user, pk)
            transaction.on_commit(lambda: notify.delay(pk))
        class OrderCreate(CreateView):
            def form_valid(self, form):
                transaction.on_commit(lambda: notify.apply_async((form.instance.pk,)))
                return super().form_valid(form)
        class Orders(ModelViewSet):
            def perform_create(self, serializer):
                serializer.save()
                for line in serializer.validated_data["lines"]:
                    notify.delay(line)
    """)),
    Invalid(django_project(_ATOMIC, extra="""
        # a method named like a builtin writes: a many-to-many manager's `set`
        # file: proj/views.py
        from django.shortcuts import get_object_or_404, redirect
        from proj.models import Order
        from proj.tasks import notify
        def retag(request, pk):
            order = get_object_or_404(Order, pk=pk)
            order.tags.set(request.POST.getlist("tags"))
            notify.delay(order.pk)
            return redirect("orders")
    """), count=1, message="in view `retag`", fixed=None),
    Invalid("""
        # ATOMIC_REQUESTS in one settings profile, by item assignment
        # file: proj/settings/production.py
        from .base import *
        DATABASES["default"]["ATOMIC_REQUESTS"] = True
        # file: proj/settings/base.py
        DATABASES = {"default": {}}
        # file: proj/views.py
        from django.views import View
        class Checkout(View):
            def post(self, request):
                request.user.orders.create(total=1)
                notify.delay(request.user.pk)
    """, message="proj/settings/production.py", count=1, fixed=None),
    Invalid("""
        # a post_save handler connected in another module, in a project with ATOMIC_REQUESTS
        # file: proj/settings.py
        DATABASES = {"default": {"ENGINE": "django.db.backends.postgresql", "ATOMIC_REQUESTS": True}}
        # file: proj/handlers.py
        from django.db import transaction
        def on_order_saved(sender, instance, created, **kwargs):
            if created:
                index.delay(instance.pk)
        # file: proj/apps.py
        from django.apps import AppConfig
        from django.db.models import signals
        from proj import handlers
        class OrdersConfig(AppConfig):
            def ready(self):
                signals.post_save.connect(handlers.on_order_saved, sender="orders.Order")
    """, message="connected to `post_save`, runs after Django's own save transaction", count=1, fixed="""
        # a post_save handler connected in another module, in a project with ATOMIC_REQUESTS
        # file: proj/settings.py
        DATABASES = {"default": {"ENGINE": "django.db.backends.postgresql", "ATOMIC_REQUESTS": True}}
        # file: proj/handlers.py
        from django.db import transaction
        def on_order_saved(sender, instance, created, **kwargs):
            if created:
                transaction.on_commit(lambda: index.delay(instance.pk))
        # file: proj/apps.py
        from django.apps import AppConfig
        from django.db.models import signals
        from proj import handlers
        class OrdersConfig(AppConfig):
            def ready(self):
                signals.post_save.connect(handlers.on_order_saved, sender="orders.Order")
    """),
    Invalid("""
        # connected in the same module; pre_save: no fix
        from django.db.models.signals import pre_save, post_delete
        def before(sender, instance, **kwargs):
            warm.delay(instance.pk)
        def after_delete(sender, instance, **kwargs):
            purge.delay(instance.pk)
        pre_save.connect(before)
        post_delete.connect(after_delete)
    """, count=2, fixed=None),
    Invalid("""
        from django.db.models.signals import pre_save, post_save
        from django.dispatch import receiver
        @receiver([post_save, pre_save])
        def sync(sender, instance, **kwargs):
            push.delay(instance.pk)
    """, message="before the row is even written", fixed=None, count=1),
    Invalid("""
        from django.contrib import admin
        from django.db import transaction
        from proj.tasks import rebuild
        class OrderAdmin(admin.ModelAdmin):
            def save_model(self, request, obj, form, change):
                super().save_model(request, obj, form, change)
                rebuild.delay(obj.pk)
    """, message="which the admin runs inside", fixed="""
        from django.contrib import admin
        from django.db import transaction
        from proj.tasks import rebuild
        class OrderAdmin(admin.ModelAdmin):
            def save_model(self, request, obj, form, change):
                super().save_model(request, obj, form, change)
                transaction.on_commit(lambda: rebuild.delay(obj.pk))
    """),
    Invalid("""
        from django.db.transaction import atomic
        def publish(event):
            app.send_task("events.publish", args=(event.pk,))
        def import_all(events):
            with atomic():
                for event in events:
                    publish(event)
    """, message="import_all → publish", fixed=None, count=1),
    Invalid("""
        # the gate reads a function's lines from its first decorator: `atomic` only there
        from django.db import transaction
        @transaction.atomic(
            using="default",
        )
        def place(order):
            notify_later(order)
        def notify_later(order):
            record.delay(
                order.pk)
    """, message="place → notify_later", count=1),
    Invalid(django_project(_ATOMIC, extra="""
        # an operation of a django-ninja-extra controller reads its request from `self.context`
        # file: proj/api.py
        from ninja_extra import api_controller, http_post, route
        from proj.tasks import evaluate
        @api_controller("/submissions")
        class Submissions:
            @route.post("/{pk}")
            def submit(self, pk: int):
                Submission.objects.filter(pk=pk).update(state="queued")
                evaluate.delay(pk)
            @http_post("/{pk}/retry")
            def retry(self, pk: int):
                record_retry(pk)
                evaluate.delay(pk)
    """), count=2, message="in view `Submissions."),
    Invalid("""
        # a search-index signal processor connects its own methods
        from django.db import transaction
        from django.db.models import signals
        class Processor:
            def setup(self, model):
                signals.post_delete.connect(self.handle_delete, sender=model)
                signals.pre_delete.connect(self.handle_pre_delete, sender=model)
            def handle_delete(self, sender, instance, **kwargs):
                unindex.delay(instance.pk)
            def handle_pre_delete(self, sender, instance, **kwargs):
                unlink.delay(instance.pk)
    """, count=2, message="in `Processor.handle_", fixed="""
        # a search-index signal processor connects its own methods
        from django.db import transaction
        from django.db.models import signals
        class Processor:
            def setup(self, model):
                signals.post_delete.connect(self.handle_delete, sender=model)
                signals.pre_delete.connect(self.handle_pre_delete, sender=model)
            def handle_delete(self, sender, instance, **kwargs):
                transaction.on_commit(lambda: unindex.delay(instance.pk))
            def handle_pre_delete(self, sender, instance, **kwargs):
                transaction.on_commit(lambda: unlink.delay(instance.pk))
    """),
)
