"""The operation queue's consumer: claims operations from the store and runs their handlers."""

from mindbank.worker.runner import Worker

__all__ = ["Worker"]
