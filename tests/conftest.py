"""Suite-wide fixtures and the ``gpu`` marker's skip rule."""

from __future__ import annotations

import functools

import pytest


@functools.cache
def gpu_unusable_reason() -> str | None:
    """None when CuPy can run kernels here, else why not (shown as the skip reason)."""
    try:
        import cupy  # type: ignore[import-not-found]
    except ImportError:
        return "CuPy is not installed (pip install '.[gpu]')"
    try:
        if not cupy.cuda.is_available():
            return "CuPy is installed but no CUDA device is usable"
    except Exception as exc:  # noqa: BLE001 - any driver failure means "no GPU" here
        return f"CUDA is not usable: {exc}"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = gpu_unusable_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=f"GPU test: {reason}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
