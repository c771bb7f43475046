"""Multimodal message content: text, images and video in one chat message.

A message's ``content`` is either a string or a list of parts:

- ``{"type": "text", "text": str}``
- ``{"type": "image", "image": PIL image | array | path}``
- ``{"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}`` (OpenAI form; only data
  URLs: we never download)
- ``{"type": "video", "video": iclr26.media.Video | path}``

:func:`check_content` validates and normalises parts (images decoded to RGB PIL images and
content-hashed once). :func:`loggable` replaces every image and video by its SHA-256, so sample-log keys
and stored prompts identify media by content, and re-scoring never re-encodes them.
:func:`to_openai_content` renders parts for an OpenAI-compatible server: images as base64 PNG data URLs
in ``image_url`` parts; a video as its frames, each an ``image_url`` part preceded by a text part
``"<frame t=1.25s>"`` (the chat-completions protocol has no video part that every server accepts).
"""

from __future__ import annotations

import base64
import io
import os
from typing import Any

from ..media import Video, as_pil, image_sha256

PART_TYPES = ("text", "image", "image_url", "video")


def _decode_data_url(url: Any, name: str):
    from PIL import Image

    if not isinstance(url, str) or not url.startswith("data:image/") or ";base64," not in url:
        raise ValueError(
            f"{name}: only base64 data URLs ('data:image/...;base64,...') are accepted; "
            "iclr26 never downloads images"
        )
    try:
        raw = base64.b64decode(url.split(";base64,", 1)[1], validate=True)
        with Image.open(io.BytesIO(raw)) as im:
            return im.convert("RGB")
    except Exception as exc:
        raise ValueError(f"{name}: the data URL does not hold a decodable image ({exc})") from None


def _image_part(img, name: str) -> dict[str, Any]:
    pil = as_pil(img, name)
    return {"type": "image", "image": pil, "sha256": image_sha256(pil)}


def check_part(part: Any, name: str) -> dict[str, Any]:
    """One validated, normalised content part."""
    if not isinstance(part, dict) or part.get("type") not in PART_TYPES:
        raise ValueError(f"{name} must be a dict with 'type' one of {PART_TYPES}, got {part!r:.80}")
    kind = part["type"]
    if kind == "text":
        if not isinstance(part.get("text"), str):
            raise ValueError(f"{name}['text'] must be a string")
        return {"type": "text", "text": part["text"]}
    if kind == "image":
        if "sha256" in part and "image" in part:
            return part  # already normalised
        return _image_part(part.get("image"), f"{name}['image']")
    if kind == "image_url":
        url = (part.get("image_url") or {}).get("url") if isinstance(part.get("image_url"), dict) else None
        return _image_part(_decode_data_url(url, f"{name}['image_url']['url']"), name)
    video = part.get("video")
    if isinstance(video, str | os.PathLike):
        video = Video.from_path(video)
    if not isinstance(video, Video):
        raise ValueError(f"{name}['video'] must be an iclr26.media.Video or a path to a video file")
    return {"type": "video", "video": video, "sha256": part.get("sha256") or video.sha256()}


def check_content(content: Any, name: str = "content") -> str | list[dict[str, Any]]:
    """A message's content: a string, or a non-empty list of parts (validated and normalised)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list | tuple) and content:
        return [check_part(p, f"{name}[{i}]") for i, p in enumerate(content)]
    raise ValueError(f"{name} must be a string or a non-empty list of content parts")


def has_media(prompt: Any) -> bool:
    """Whether a prompt (text or chat) holds an image or a video."""
    if isinstance(prompt, str):
        return False
    return any(
        isinstance(m.get("content"), list) and any(p["type"] in ("image", "video") for p in m["content"])
        for m in prompt
    )


def loggable(prompt: Any) -> Any:
    """The prompt with media replaced by their content hashes (JSON-serialisable, stable)."""
    if isinstance(prompt, str) or not isinstance(prompt, list):
        return prompt
    out = []
    for m in prompt:
        content = m.get("content")
        if isinstance(content, list):
            content = [check_part(p, "content part") for p in content]
            content = [
                {"type": p["type"], "sha256": p["sha256"]} if p["type"] in ("image", "video") else p
                for p in content
            ]
        out.append({**m, "content": content})
    return out


def image_data_url(image) -> str:
    """A PNG data URL of ``image``."""
    buf = io.BytesIO()
    as_pil(image).save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def to_openai_content(content: str | list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """Content in the chat-completions form (see the module docstring for video)."""
    if isinstance(content, str):
        return content
    out: list[dict[str, Any]] = []
    for p in content:
        if p["type"] == "text":
            out.append({"type": "text", "text": p["text"]})
        elif p["type"] == "image":
            out.append({"type": "image_url", "image_url": {"url": image_data_url(p["image"])}})
        else:
            for frame, t in zip(p["video"].frames, p["video"].timestamps):
                out.append({"type": "text", "text": f"<frame t={t:.2f}s>"})
                out.append({"type": "image_url", "image_url": {"url": image_data_url(frame)}})
    return out


def images_of(content: str | list[dict[str, Any]]) -> list:
    """The PIL images of a message's content, in order (a video contributes its frames)."""
    if isinstance(content, str):
        return []
    imgs = []
    for p in content:
        if p["type"] == "image":
            imgs.append(p["image"])
        elif p["type"] == "video":
            imgs.extend(p["video"].frames)
    return imgs


def text_only(prompt: Any, model: str) -> Any:
    """A chat whose list contents are joined into strings; a prompt with media is refused with a
    message naming the text-only ``model``."""
    if isinstance(prompt, str):
        return prompt
    if has_media(prompt):
        raise ValueError(
            f"model {model!r} is text-only and the prompt holds an image or a video: use a vision-language "
            "backend (iclr26.models.HFVisionModel, or an OpenAI-compatible server of a VLM)"
        )
    return [
        {
            **m,
            "content": m["content"]
            if isinstance(m["content"], str)
            else "".join(p["text"] for p in m["content"]),
        }
        for m in prompt
    ]
