"""gpulint: lint Kubernetes manifests for GPU scheduling mistakes."""

__version__ = "0.1.0"
