"""Whether an answer is a refusal, as the engine's nl-gold judge (nl-gold-judge-v3) decides it.

The engine exposes its text normalisation (`ragspine.common.answer_text`) but keeps its refusal
detection inside its evaluation package, which this project never imports; so the rule is
written here, from the judge's documented behaviour, and an agreement test holds it to the
engine's verdicts (tests/answers/test_verdicts.py runs the engine's judge in a subprocess):

1. The refusal words written in Traditional Chinese (資料, 沒有, 給出, 無法, ...) are first
   folded to Simplified, character by character, with a small table of Traditional-only
   characters (so Simplified text is never changed). Only refusal detection sees the fold.
2. The engine's fixed texts refuse wherever they stand: a line that starts with 查不到 or
   无法识别参数, or the no-material sentences 未检索到与该问题相关的资料 / 无法基于现有知识库作答
   (after NFKC).
3. Otherwise only the answer's lead counts: its heading lines, then the first sentence of its
   first body line (joined with the next lines while shorter than 12 normalised characters, four
   lines at most), parenthetical remarks removed. A lead that hedges an answer ("most likely",
   "probably", 很可能 ...) is an answer, not a refusal; a lead with a refusal phrase
   (`PHRASES`, compared after the engine's normalisation) or a refusal sentence pattern
   ("does not state", "cannot be determined", "not disclosed", "contains no", "none of the
   snippets", 资料中没有 ...) is a refusal.

Invariants: `is_refusal` is a pure function of the text; a clarifying question or a provider's
degraded notice is not a refusal unless its lead says so.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

from ragspine.common.answer_text import normalize_answer

# Traditional-only characters of refusal wording, and their Simplified forms, pair by pair.
_FOLD = str.maketrans(dict(zip(
    "資沒給無關檢從確說並內裡裏來檔圖頁結與該問題於現識庫別參數斷為",
    "资没给无关检从确说并内里里来档图页结与该问题于现识库别参数断为", strict=True)))

_FIXED = re.compile("|".join((
    r"(?m)^[ \t]*(?:查不到|无法识别参数)",
    "未检索到与该问题相关的资料",
    "无法基于现有知识库作答",
)))

_ZH_NOT = ("提及", "提到", "提供", "包含", "披露", "找到", "明确", "说明", "给出", "列出", "涉及")
_EN_NOT = ("found", "mentioned", "provided", "included", "disclosed", "stated", "specified",
           "available")
_EN_DO_NOT = ("contain", "provide", "mention", "include", "specify", "state")
PHRASES: tuple[str, ...] = (
    "查不到", "未检索到与该问题相关的资料", "无法基于现有知识库作答", "无法识别参数",
    *(f"{neg}{verb}" for verb in _ZH_NOT for neg in ("未", "没有")),
    "不包含", "找不到", "无法确定", "无法回答", "无法给出", "无法从", "无法明确", "无从",
    "不能确定", "没有相关", "无相关",
    *(f"not {word}" for word in _EN_NOT),
    "no information",
    *(f"{aux} not {verb}" for verb in _EN_DO_NOT for aux in ("does", "do")),
    "cannot be determined", "can't be determined", "cannot determine", "can't determine",
    "unable to", "cannot answer", "can't answer", "not possible to",
    "insufficient information", "not enough information",
)


def _words(*items: str) -> str:
    return "(?:" + "|".join(items) + ")"


_ADVERB = r"(?: \w+ly)?"  # one -ly adverb may stand between: "does not explicitly state"
_PATTERNS = tuple(re.compile(p) for p in (
    r"\b(?:do|does|did)(?: not|n t)" + _ADVERB + " " + _words(
        "contain", "provide", "mention", "include", "specify", "state", "show", "list", "give",
        "say", "disclose", "report", "indicate", "identify", "define", "establish", "describe",
        "cover", "present", "reveal", "confirm") + r"\b",
    r"\b(?:cannot|can t|could not|couldn t)" + _ADVERB + " (?:be )?" + _words(
        "determined?", "answer(?:ed)?", "find", "found", "confirm(?:ed)?", "identif(?:y|ied)",
        "tell", "establish(?:ed)?", "infer(?:red)?") + r"\b",
    r"\bnot" + _ADVERB + " " + _words(
        "stated", "mentioned", "provided", "disclosed", "shown", "specified", "given", "reported",
        "included", "available", "found", "covered", "addressed", "listed", "indicated",
        "identified") + r"\b",
    r"\b(?:contains?|includes?|provides?|gives?|offers?) no\b",
    r"\bnone of the (?:\w+ ){0,3}?" + _words(
        "snippets?", "excerpts?", "sources?", "documents?", "passages?", "fragments?", "context",
        "materials?", "pages?", "images?", "slides?") + r"\b",
    _words("片段", "资料", "材料", "上下文", "文档", "文件", "来源", "检索结果", "页图", "图片")
    + "[中里内]?[均都并]?(?:没有|未|无)",
))
_HEDGE = re.compile(r"\b(?:most likely|probably|presumably)\b|很可能|大概率|可能是|推断(?:为|是)|只是推断")
_SENTENCE_END = re.compile(r"[。！？!?]|\.(?=\s|\*|$)")
_PARENTHESES = re.compile(r"（[^（）]*）|\([^()]*\)")
LEAD_MIN_CHARS = 12
LEAD_MAX_LINES = 4


@cache
def _phrases() -> tuple[str, ...]:
    return tuple(normalize_answer(p) for p in PHRASES)


def fold_traditional(text: str) -> str:
    """`text` with the Traditional characters of refusal wording written in Simplified."""
    return text.translate(_FOLD)


def answer_lead(text: str) -> str:
    """The part of an answer a refusal is looked for in (rule 3 of the module docstring)."""
    parts: list[str] = []
    for line in (raw.strip() for raw in text.splitlines()):
        if not line:
            continue
        if line.startswith("#"):
            parts.append(line.lstrip("#").strip())
        else:
            end = _SENTENCE_END.search(line)
            first = line if end is None else line[:end.end()]
            parts.append(first)
            if len(normalize_answer(first)) >= LEAD_MIN_CHARS:
                break
        if len(parts) >= LEAD_MAX_LINES:
            break
    return _PARENTHESES.sub(" ", " ".join(parts))


def is_refusal(answer: str) -> bool:
    """True when `answer` refuses or says nothing was found (the module docstring's rules)."""
    text = fold_traditional(answer)
    if _FIXED.search(unicodedata.normalize("NFKC", text)):
        return True
    lead = normalize_answer(answer_lead(text))
    if not lead or _HEDGE.search(lead):
        return False
    return any(p in lead for p in _phrases()) or any(p.search(lead) for p in _PATTERNS)
