"""Which files are a deployment's, by their path (no imports: the run
checks them for its notice without loading the deployment model)."""

from __future__ import annotations

import re

from ..celeryconf.paths import TEST_PATH

# Not a deployment: tests, examples, documentation.
SKIPPED = re.compile(r"(?:^|/)(?:examples?|samples?|docs?|documentation)/")
COMPOSE = re.compile(r"(?:^|/)(?:docker-)?compose[^/]*\.ya?ml$")
# YAML the Kubernetes reader is likely to be given: by the directory it is in
KUBERNETES_DIR = re.compile(r"(?:^|/)(?:k8s|kube|kubernetes|manifests?|deploy(?:ment)?s?|helm|charts?|openshift)/[^/]*\.ya?ml$")
DEPLOYMENT_RULES = frozenset({"CL121", "CL122", "CL123", "CL124"})
YAML_NOTICE = ("compose files and Kubernetes manifests are not read (the deployment rules and --show-apps see none "
               "of their processes): install celerylint's `yaml` extra (PyYAML)")


def is_deployment_path(path: str) -> bool:
    return not TEST_PATH.search(path) and not SKIPPED.search(path)


def yaml_deployment_file(path: str) -> bool:
    """A compose file or a manifest in a deployment directory, outside tests and docs."""
    path = path.replace("\\", "/")
    return is_deployment_path(path) and (COMPOSE.search(path) is not None or KUBERNETES_DIR.search(path) is not None)
