"""Questions written by the user's model, behind its cassette: recorded against the loopback
model, replayed without it; a reply whose answer's figure is not on the fact's page is dropped,
never kept with the template's questions."""

from __future__ import annotations

import importlib.util
import json
import re

import pytest

from loopback_llm import LoopbackModel
from ragspine_eval.drafting.documents import draft_from_documents
from ragspine_eval.drafting.pages import Page, Pages
from ragspine_eval.models.providers import ProviderSpec
from ragspine_eval.models.recorder import ModelRun

pytestmark = pytest.mark.skipif(importlib.util.find_spec("litellm") is None,
                                reason="the models extra (pip install -e '.[models]')")

PAGE_1 = "Crop statistics 2012-13\nRice production 1,702.5\nWheat area 318.25\n"
PAGE_2 = "Rainfall 2013\nMonsoon rainfall 912.4\n"
PAGES = Pages((Page("crops.pdf", "a" * 64, 1, PAGE_1), Page("crops.pdf", "a" * 64, 2, PAGE_2)),
              sha256={"crops.pdf": "a" * 64})


class QuestionWriter(LoopbackModel):
    """Writes the JSON the draft asks for; for the wheat fact its answer states 999.9, which is
    on no page (a model that made a figure up)."""

    def answer(self, body, nth):
        prompt = body["messages"][-1]["content"]
        value = re.search(r"the figure (\S+) given for '([^']+)'", prompt)
        figure, label = value.group(1), value.group(2)
        said = "999.9" if label.startswith("Wheat") else figure
        reply = {"en": f"What was {label}?", "zh": f"{label}是多少？",
                 "answer": f"{label} was {said}."}
        return {"role": "assistant", "content": json.dumps(reply)}, "stop"


@pytest.fixture
def writer():
    model = QuestionWriter().start()
    yield model
    model.stop()


def _run(base_url, cassette, mode):
    return ModelRun(ProviderSpec("litellm", "openai/loopback", base_url), str(cassette), mode)


def test_the_models_questions_are_kept_only_where_its_answer_is_on_the_page(
        writer, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-draft-test")
    cassette, url = tmp_path / "draft.cassette", writer.base_url
    cases, skipped = draft_from_documents(PAGES, per_document=3, abstentions=0,
                                          model=_run(url, cassette, "record"))
    kept = {c.claims[0][0].value: c for c in cases}
    assert set(kept) == {"1,702.5", "912.4"}
    assert kept["1,702.5"].questions == {"en": "What was Rice production?",
                                         "zh": "Rice production是多少？"}
    assert kept["1,702.5"].tags["from"] == "documents+model"
    assert kept["912.4"].claims[0][0].page == 2
    (drop,) = skipped
    assert "999.9" in drop.reason and "not on crops.pdf page 1" in drop.reason

    writer.stop()  # the replay reaches no server: the cassette answers
    replayed, skipped_again = draft_from_documents(PAGES, per_document=3, abstentions=0,
                                                   model=_run(url, cassette, "replay"))
    assert replayed == cases and skipped_again == skipped


def test_a_reply_that_is_not_the_json_asked_for_drops_the_fact(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-draft-test")
    echo = LoopbackModel().start()  # echoes the prompt: its JSON's answer is "...", no figure
    try:
        cases, skipped = draft_from_documents(PAGES, per_document=1, abstentions=0,
                                              model=_run(echo.base_url, tmp_path / "e.cassette", "record"))
    finally:
        echo.stop()
    assert cases == []
    assert skipped and all("dropped" in s.reason for s in skipped)
