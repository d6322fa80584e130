"""``celerylint doctor``: read-only checks of a live Redis broker.

``codes`` names the findings (CL150-CL155), ``connect`` turns a broker URL
into a read-only redis-py client (and masks its password), ``kombu_keys``
knows the keys kombu's Redis transport and Celery's Redis backend make,
``targets`` finds each app's broker URL and visibility timeout with the
static model, ``checks`` reads the server and ``run`` ties them together.
redis-py is an optional extra: nothing here imports it at module level.
"""
