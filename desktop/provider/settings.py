"""The provider configuration: validated input, two private files (the key apart), environment
defaults. Blocking file I/O: the routes call it through a thread."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Literal

from yarl import URL

from desktop.config import Settings, read_json_file, write_private_file
from desktop.provider.profiles import DEFAULT_BASE_URLS, PROVIDERS, Profile, make_profile

log = logging.getLogger("desk.provider")

MAX_MODEL = 256
MAX_URL = 2048
MAX_KEY = 4096
MAX_TIER = 64
_FIELDS = (
    "provider",
    "base_url",
    "model",
    "api_key",
    "mistral",
    "parallel_tool_calls",
    "service_tier",
    "context_window",
    "reasoning_effort",
    "include_reasoning",
)
EFFORTS = ("low", "medium", "high")
MAX_WINDOW = 100_000_000


class ConfigInvalid(ValueError):
    """Bad provider configuration input; the message never contains the key."""


@dataclass(frozen=True)
class ProviderConfig:
    provider: str = "openai-compatible"
    base_url: str = ""
    model: str = ""
    mistral: bool | None = None  # None: detected from the base URL and model
    parallel_tool_calls: bool | None = None
    service_tier: str | None = None
    context_window: int | None = None  # the model's window when the user knows it
    reasoning_effort: str | None = None  # low, medium or high; None: the server's default
    include_reasoning: bool | None = None  # Groq's gpt-oss models: show their reasoning

    @property
    def effective_base_url(self) -> str:
        return self.base_url or DEFAULT_BASE_URLS.get(self.provider, "")

    @property
    def configured(self) -> bool:
        return bool(self.model and self.effective_base_url and self.provider in PROVIDERS)

    def as_json(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class ConfigUpdate:
    config: ProviderConfig
    key_action: Literal["keep", "set", "clear"] = "keep"  # api_key absent / a key / null or ""
    api_key: str = field(default="", repr=False)


def _string(body: Mapping[str, object], name: str, limit: int, *, required: bool) -> str:
    value = body.get(name, "" if not required else None)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise ConfigInvalid(f"{name} must be a string.")
    value = value.strip()
    if len(value) > limit:
        raise ConfigInvalid(f"{name} is at most {limit} characters.")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ConfigInvalid(f"{name} must not contain control characters.")
    return value


def _optional_bool(body: Mapping[str, object], name: str) -> bool | None:
    value = body.get(name)
    if value is None or isinstance(value, bool):
        return value
    raise ConfigInvalid(f"{name} must be true, false or null.")


def check_base_url(raw: str) -> str:
    """An http(s) URL with a host and no credentials, query or fragment (no secrets in
    URLs; the key goes in a header). Returned without a trailing slash."""
    try:
        url = URL(raw)
    except (ValueError, TypeError) as exc:
        raise ConfigInvalid("base_url is not a URL.") from exc
    if url.scheme not in ("http", "https") or not url.host:
        raise ConfigInvalid("base_url must be an http:// or https:// URL with a host.")
    if url.user is not None or url.password is not None:
        raise ConfigInvalid("base_url must not contain credentials; send the key as api_key.")
    if url.query_string or url.fragment:
        raise ConfigInvalid("base_url must not have a query or a fragment.")
    return raw.rstrip("/")


def origin(base_url: str) -> str:
    """scheme://host:port of a base URL (what a key is bound to); "" when there is none."""
    if not base_url:
        return ""
    try:
        return str(URL(base_url).origin())
    except ValueError:
        return base_url


def parse_update(body: Mapping[str, object]) -> ConfigUpdate:
    """Validate a `PUT /api/config/provider` body completely before anything is written."""
    unknown = sorted(set(body) - set(_FIELDS))
    if unknown:
        raise ConfigInvalid(f"Unknown field(s): {', '.join(unknown)}.")
    provider = _string(body, "provider", 64, required=True)
    if provider not in PROVIDERS:
        raise ConfigInvalid(f"provider must be one of {', '.join(PROVIDERS)}.")
    model = _string(body, "model", MAX_MODEL, required=True)
    if not model:
        raise ConfigInvalid("model must not be empty.")
    base_url = _string(body, "base_url", MAX_URL, required=False)
    if base_url:
        base_url = check_base_url(base_url)
    elif provider == "openai-compatible":
        raise ConfigInvalid("base_url is required for an openai-compatible provider.")
    tier = body.get("service_tier")
    if tier is not None:
        tier = _string(body, "service_tier", MAX_TIER, required=True) or None
    window = body.get("context_window")
    if window is not None and (
        isinstance(window, bool) or not isinstance(window, int) or not 0 < window <= MAX_WINDOW
    ):
        raise ConfigInvalid(f"context_window must be a whole number of tokens, 1 to {MAX_WINDOW}.")
    effort = body.get("reasoning_effort")
    if effort is not None and effort not in EFFORTS:
        raise ConfigInvalid("reasoning_effort must be 'low', 'medium', 'high' or null.")
    config = ProviderConfig(
        provider=provider,
        base_url=base_url,
        model=model,
        mistral=_optional_bool(body, "mistral"),
        parallel_tool_calls=_optional_bool(body, "parallel_tool_calls"),
        service_tier=tier,
        context_window=window,
        reasoning_effort=effort if isinstance(effort, str) else None,
        include_reasoning=_optional_bool(body, "include_reasoning"),
    )
    if "api_key" not in body:
        return ConfigUpdate(config)
    key = body["api_key"]
    if key is None:
        return ConfigUpdate(config, "clear")
    if not isinstance(key, str):
        raise ConfigInvalid("api_key must be a string or null.")
    key = key.strip()
    if len(key) > MAX_KEY:
        raise ConfigInvalid(f"api_key is at most {MAX_KEY} characters.")
    # It goes into an HTTP header: printable ASCII without spaces, or a header injection.
    if key and not all(33 <= ord(c) <= 126 for c in key):
        raise ConfigInvalid("api_key must be printable ASCII without spaces.")
    return ConfigUpdate(config, "set", key) if key else ConfigUpdate(config, "clear")


def _from_file(raw: Mapping[str, object]) -> ProviderConfig:
    """A stored file goes through the same checks as input; a bad one raises ConfigInvalid."""
    return parse_update({k: v for k, v in raw.items() if k != "api_key"}).config


class ProviderConfigStore:
    """Loads and saves the configuration; one lock orders concurrent saves."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._lock = threading.Lock()

    def _env_config(self) -> ProviderConfig:
        env = self._settings.provider
        base_url = env.base_url.strip()
        if base_url:
            try:
                base_url = check_base_url(base_url)
            except ConfigInvalid as exc:
                log.warning("ignoring DESK_BASE_URL: %s", exc)
                base_url = ""
        return ProviderConfig(provider=env.provider, base_url=base_url, model=env.model.strip())

    def _stored_key(self) -> str:
        try:
            return self._settings.provider_key_path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return ""

    def load(self) -> tuple[ProviderConfig, str]:
        """The effective configuration and key (file over environment)."""
        path = self._settings.provider_config_path
        try:
            raw = read_json_file(path)
            config = self._env_config() if raw is None else _from_file(raw)
        except ValueError as exc:  # ConfigInvalid too: a hand-edited file went wrong
            log.warning("ignoring %s (%s); using the environment's provider", path, exc)
            config = self._env_config()
        key = self._stored_key()
        env_origin = origin(self._env_config().effective_base_url)
        if not key and origin(config.effective_base_url) == env_origin:
            key = self._settings.provider.api_key  # given for DESK_BASE_URL's server only
        return config, key

    def public(self) -> dict[str, object]:
        """What GET returns: the configuration and whether a key is set, never the key."""
        config, key = self.load()
        stored = self._settings.provider_config_path.exists()
        return {
            **config.as_json(),
            "effective_base_url": config.effective_base_url,
            "api_key_set": bool(key),
            "configured": config.configured,
            "source": "file" if stored else "environment",
        }

    def save(self, update: ConfigUpdate) -> dict[str, object]:
        with self._lock:
            current, _ = self.load()
            moved = origin(current.effective_base_url) != origin(update.config.effective_base_url)
            if update.key_action == "keep" and moved:
                # The stored key was given for another server: never send it to this one.
                update = ConfigUpdate(update.config, "clear")
            if update.key_action == "set":
                write_private_file(self._settings.provider_key_path, update.api_key + "\n")
            elif update.key_action == "clear":
                self._settings.provider_key_path.unlink(missing_ok=True)
            write_private_file(
                self._settings.provider_config_path, json.dumps(update.config.as_json(), indent=2)
            )
            return self.public()

    def profile(self) -> Profile | None:
        """The profile to talk to, or None when no provider is configured."""
        config, key = self.load()
        if not config.configured:
            return None
        return make_profile(**asdict(config), api_key=key)  # its fields are make_profile's
