"""Reusable views: a report turned into frames, charts, tables, banners, explorers and case views.

frames (reports as tidy DataFrames), provenance_view (what produced a report), charts (Altair
charts of the frames), embed (live Vega charts with no network), tables (static and interactive
tables), html (`Html`, `setup_display`), drilldown (the verdict banner and the clickable failure
explorer), linked (charts that filter a table, shared by the explorers), case_view (one QA case
whole), retrieval_view (a case's ranked passages), second_opinion (where another judge disagrees
with the gate's), cell_view (one extraction cell in its document), extraction_explorer (the
extraction banners and explorer), model_usage (the model's tokens, cost and latency per stage
and by tag), answers_case (one answered question, its routes side by side), answer_labels (its
faithfulness verdicts marked right or wrong, exported as labels) and changed_words (two answers'
changed words marked in escaped HTML). Pure functions of a report (and the stored baseline entry
where a delta is shown); a view never imports a front.
"""
