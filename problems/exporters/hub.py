"""Publishing an export folder as a Hugging Face Hub dataset (``export_dataset ... --push-to-hub``)."""

from __future__ import annotations

import os
from pathlib import Path


class HubError(RuntimeError):
    """The Hub refused or could not be reached; the message says why."""


def hub_push(*, folder: Path, repo: str, token: str | None = None, private: bool = False,
             message: str = "hardtests_web export") -> str:
    """Create the dataset repo if needed and upload every file of ``folder`` in one commit; the commit URL.

    The token defaults to $HF_TOKEN (huggingface_hub's own lookup); the Hub address to
    $HF_ENDPOINT, read here rather than at import so a changed environment takes effect.
    """
    try:
        from huggingface_hub import HfApi
        from huggingface_hub.errors import HfHubHTTPError
    except ImportError as exc:  # pragma: no cover - a dependency of the project
        raise HubError("huggingface_hub is not installed") from exc
    api = HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None, token=token or None)
    try:
        api.create_repo(repo, repo_type="dataset", private=private, exist_ok=True)
        info = api.upload_folder(folder_path=str(folder), repo_id=repo, repo_type="dataset", commit_message=message)
    except (HfHubHTTPError, OSError, ValueError) as exc:
        raise HubError(f"pushing to the Hub dataset {repo!r} failed: {exc}") from exc
    return str(info.commit_url if hasattr(info, "commit_url") else info)
