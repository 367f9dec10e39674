"""The e2e tests' fixtures (their plain helpers: tests/e2e/claude.py, plugin.py, binaries.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .plugin import PIP_CACHE


@pytest.fixture(scope="module")
def pip_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One pip download cache for a module: the second venv build downloads nothing again."""
    PIP_CACHE.append(str(tmp_path_factory.mktemp("pip-cache")))
    yield
    PIP_CACHE.clear()
