"""``celerylint doctor``: read-only checks of a live broker, and with
``--workers`` of the running workers.

Redis: ``codes`` names the findings (CL150-CL159), ``connect`` turns a
broker URL into a read-only redis-py client (and masks its password),
``tls_probe`` names TLS on one side only, ``kombu_keys`` knows the keys
kombu's Redis transport and Celery's Redis backend make, ``checks`` reads
the server.  RabbitMQ: ``rabbitmq`` reads the management API (GET only),
``rabbit_checks`` judges it, ``rabbit_run`` runs them.  Workers:
``workers`` asks them with Celery's ``inspect``, ``worker_checks`` judges
the replies, ``worker_run`` runs them.  ``targets`` finds each app's broker
URL, visibility timeout and the settings compared with the live ones, with
the static model; ``run`` ties them together.  redis-py and Celery are
optional (the ``doctor`` extra): nothing here imports them at module level.
"""
