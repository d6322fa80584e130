import os

broker_url = os.environ.get("BROKER_URL", "redis://redis:6379/0")
result_backend = os.environ.get("RESULT_BACKEND", "redis://redis:6379/1")

task_serializer = "json"
accept_content = ["json"]
task_ack_late = True  # misspelled: Celery ignores it

task_time_limit = 2 * 60 * 60
broker_transport_options = {"visibility_timeout": 3600}
