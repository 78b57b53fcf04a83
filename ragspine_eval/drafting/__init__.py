"""Gold drafts: an nl-answers-gold file drafted from a team's questions or documents, reviewed page by page.

pages (a workspace's pages as the engine read them, and where a figure or a quote sits on
them), figures (the figures and quoted spans an answer states, and which answer the question),
draft_file (drafted cases written as nl-answers-gold v2, every case marked for review in its
changelog), questions (`draft_from_questions`: the engine asked through the answer harness,
its answer's figures found on pages), documents (`draft_from_documents`: numbered facts of each
page, questions from templates in both languages, out-of-scope abstentions, each case tagged
with the stage it tests), model_questions (the same facts' questions
written by the user's model behind its cassette, kept only where its answer is on the page),
review (a review's decisions file, read strictly and folded into the
gold file with who, when and what changed in its changelog) and coverage (the documents,
pages, claim kinds, languages and stages a gold file covers).
It sits on floor 6, right above the harnesses: a draft from questions asks the engine through
the answer harness (answers/, floor 5), and nothing below needs a draft; the workbench's review
views and the command line (`ragspine-eval gold`) call it.

The names below are imported on first use.
"""

from ragspine_eval.lazy import lazy_exports

_WHERE = {
    "read_pages": "pages",
    "draft_from_questions": "questions",
    "DraftCase": "draft_file",
    "DraftError": "draft_file",
    "write_draft": "draft_file",
}

__all__, __getattr__ = lazy_exports(__name__, _WHERE)
