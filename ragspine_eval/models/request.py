"""One call to a model as data: the canonical request, its key, and what differs between two.

A request is what the engine hands its provider's `chat(messages, tools)` plus what decides the
answer beyond them: provider, model, base URL, every generation parameter
(`providers.generation_params`) and the repeat index (the n-th of `--repeat N`, so each repeat
keeps its own answer).

Invariants:
- `canonical` is plain JSON data (dicts, lists, text, numbers, booleans, None): a tuple becomes a
  list, a mapping's keys are text, so a request read back from a cassette is equal to the one
  the engine made;
- `request_key` is a hash of the whole canonical request: two requests share a key only when
  every field is equal, whatever the key order of their mappings; nothing else (the case, the
  time, a retry count) enters it;
- `differences` names, in words an analyst reads, what separates a request from a recorded one:
  the model or provider, a parameter, the tools, the system prompt, a retrieved passage (a
  numbered `[n]` line of the engine's synthesis prompt), another message; never a key or header,
  which a request never holds.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

from ragspine_eval.fingerprints import canonical_hash

FIELDS = ("provider", "model", "base_url", "params", "tools", "messages", "repeat")
CLIP = 90


def canonical(value: Any) -> Any:
    """`value` as plain JSON data (module docstring)."""
    if isinstance(value, Mapping):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    if value is None or isinstance(value, str | bool | int | float):
        return value
    return str(value)


def make_request(spec: Mapping[str, Any], messages: Sequence[Any], tools: Sequence[Any] | None,
                 params: Mapping[str, Any], repeat: int = 0) -> dict[str, Any]:
    """The canonical request of one `chat` call; `spec` is a ProviderSpec.to_dict()."""
    return canonical({"provider": spec.get("provider"), "model": spec.get("model"),
                      "base_url": spec.get("base_url"), "params": dict(params),
                      "tools": list(tools or []), "messages": list(messages), "repeat": repeat})


def request_key(request: Mapping[str, Any]) -> str:
    """The key of a canonical request: 16 hex of sha256 over its canonical JSON."""
    return canonical_hash(request)


def clip(text: Any, limit: int = CLIP) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def differences(now: Mapping[str, Any], then: Mapping[str, Any]) -> list[str]:
    """What differs between this request and a recorded one, one phrase each (docstring)."""
    out: list[str] = []
    for name in ("provider", "model", "base_url", "repeat"):
        if now.get(name) != then.get(name):
            out.append(f"the {name.replace('_', ' ')}: recorded {then.get(name)!r}, now "
                       f"{now.get(name)!r}")
    p_now, p_then = now.get("params") or {}, then.get("params") or {}
    for name in sorted(set(p_now) | set(p_then)):
        if p_now.get(name) != p_then.get(name):
            out.append(f"the parameter {name}: recorded {p_then.get(name)!r}, now "
                       f"{p_now.get(name)!r}")
    if (now.get("tools") or []) != (then.get("tools") or []):
        out.append(f"the tools: recorded {_tool_names(then)}, now {_tool_names(now)}")
    out += _message_differences(now.get("messages") or [], then.get("messages") or [])
    return out


def _tool_names(request: Mapping[str, Any]) -> str:
    names = [str((t.get("function") or t).get("name")) if isinstance(t, dict) else str(t)
             for t in request.get("tools") or []]
    return ", ".join(names) or "none"


def _text(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else message
    if isinstance(content, list):  # text and image parts: the text parts
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def _message_differences(now: list[Any], then: list[Any]) -> list[str]:
    out: list[str] = []
    if len(now) != len(then):
        out.append(f"the number of messages: recorded {len(then)}, now {len(now)}")
    for i, (a, b) in enumerate(zip(now, then)):
        if a == b:
            continue
        role = a.get("role") if isinstance(a, dict) else "?"
        what = "the system prompt" if role == "system" else f"message {i + 1} ({role})"
        if isinstance(a, dict) and isinstance(b, dict) and a.get("role") != b.get("role"):
            out.append(f"{what}: recorded role {b.get('role')!r}, now {role!r}")
            continue
        lines = _line_change(_text(a), _text(b))
        if lines is None:  # the text is the same: tool calls or ids differ
            out.append(f"{what}: its tool calls or ids differ")
            continue
        passage = _passage_number(lines[1]) or _passage_number(lines[0])
        old, new = _around(*lines)
        if passage is not None:
            out.append(f"retrieved passage [{passage}] in {what}: recorded {clip(old)!r}, now "
                       f"{clip(new)!r}")
        else:
            out.append(f"{what}: recorded {clip(old)!r}, now {clip(new)!r}")
    return out


def _line_change(now: str, then: str) -> tuple[str, str] | None:
    """The first changed line of two texts (recorded, now); None when they are equal."""
    if now == then:
        return None
    old_lines, new_lines = then.splitlines() or [""], now.splitlines() or [""]
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            old = old_lines[i1] if i1 < i2 else "(nothing)"
            new = new_lines[j1] if j1 < j2 else "(nothing)"
            return old, new
    return then, now  # pragma: no cover - unequal texts have a changed line


def _around(old: str, new: str, before: int = 24) -> tuple[str, str]:
    """Two changed lines cut to where they first differ (a long line's change stays visible)."""
    same = 0
    while same < min(len(old), len(new)) and old[same] == new[same]:
        same += 1
    if same <= before:
        return old, new
    return "…" + old[same - before:], "…" + new[same - before:]


def _passage_number(line: str) -> str | None:
    """n of a line `[n] passage text` (the engine's synthesis prompt numbers its passages)."""
    if line.startswith("[") and "]" in line[:8]:
        number = line[1:line.index("]")]
        return number if number.isdigit() else None
    return None
