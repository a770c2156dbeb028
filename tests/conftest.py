"""Suite-wide fixtures, the ``gpu`` marker's skip rule and the provisioned-tool rule."""

from __future__ import annotations

import functools

import pytest

from tests.provisioning import PROVISIONED_ENV


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "missing_tool(why): a tool `make test` installs is missing (tests/provisioning)"
    )


@pytest.fixture
def _missing_provisioned_tool(request: pytest.FixtureRequest) -> None:
    """Fails a test whose module needs a tool ``make test`` should have installed but did not."""
    mark = request.node.get_closest_marker("missing_tool")
    why = mark.args[0] if mark else "a tool it needs is not installed"
    pytest.fail(f"{why}, although {PROVISIONED_ENV}=1 says `make test` provisioned this run")


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
