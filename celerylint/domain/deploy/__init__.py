"""The deployment model: the worker and beat processes the launch files of
the tree start (compose files, Procfiles, Dockerfiles, Kubernetes
manifests, systemd units, supervisord programs, the shell scripts they
run), and the RabbitMQ server settings they set.  ``model.deployment(m)``
reads them once per run, lazily: only a deployment rule or ``--show-apps``
asks.  One module per source format; ``cmdline`` reads a command line."""
