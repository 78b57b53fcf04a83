"""general.py: claims outside the financial vocabulary, by numbers, names (matched forgivingly),
stemmed coverage of the claim by the context and by its best window of sentences."""

import pytest

from ragspine_eval.judges.financial import general
from ragspine_eval.judges.financial.judge import FinancialJudge

PAGE = ("Media Play News is the voice of the home entertainment industry.\n"
        "Thomas K. Arnold was named publisher and editorial director in 2016.\n"
        "The magazine announced a new daily newsletter in 2018.\n"
        "The band did not tour Europe that year, and the album was not released until 2019.\n"
        "The festival is held every September in Lorne.\n"
        "Reporters from Libya and the Société de transport de Montréal attended.")


@pytest.mark.parametrize(("claim", "supported", "rule"), [
    ("Arnold is the publisher and editorial director of Media Play News.", True, None),
    # stems: announcing / announced, newsletters / newsletter
    ("The magazine is announcing new daily newsletters.", True, None),
    ("Arnold is the publisher of Media Play News and Variety.", False, "name not found"),
    ("The magazine announced a daily newsletter, and plans a weekly podcast with guest hosts.",
     False, "unsupported words"),
    ("The album was not released until 2019.", True, None),
    ("The magazine announced a new daily newsletter in 2017.", False, "period changed"),
    ("The festival is held every September in Lorne.", True, None),  # a month is no name
    # names matched forgivingly: a possessive, accents, an initial, a demonym's shared prefix
    ("Arnold's magazine announced a new daily newsletter.", True, None),
    ("Reporters from the Societe de transport de Montreal attended.", True, None),
    ("Thomas K. Arnold was named publisher.", True, None),
    ("The Libyan reporters attended.", True, None),
    ("Reporters from Lebanon attended.", False, "name not found"),
])
def test_the_general_path(claim, supported, rule):
    check = FinancialJudge().assess(claim, [PAGE])
    assert check.entailed is supported, check.detail
    if rule is not None:
        assert check.rule == rule, check.detail


FILLER = [f"Sentence {i} is about something else entirely, ticket queues." for i in range(12)]


def test_words_scattered_over_a_long_page_are_not_a_claim_it_makes():
    # every word of the claim is on the page, but never within five consecutive sentences
    page = "\n".join(["The orchestra toured Canada.", *FILLER, "A violinist resigned.",
                      *FILLER, "The conductor praised the audience.", *FILLER,
                      "Critics wrote about the hall."])
    claim = "The orchestra's violinist praised critics."
    check = FinancialJudge().assess(claim, [page])
    assert not check.entailed and check.rule == "unsupported words", check.detail
    assert "scattered" in check.detail
    # the same sentences next to one another: the claim is said in one place
    near = "\n".join(["The orchestra toured Canada.", "A violinist resigned.",
                      "The conductor praised the audience.", "Critics wrote about the hall.",
                      *FILLER])
    assert FinancialJudge().assess(claim, [near]).entailed


def test_the_best_window_counts_the_stems_of_the_densest_run_of_sentences():
    context = general.read_context("a b\nalpha beta\ngamma\ndelta\nalpha")
    stems = ["alpha", "beta", "gamma", "delta"]
    assert general.best_window(stems, context, 1) == 2
    assert general.best_window(stems, context, 2) == 3
    assert general.best_window(stems, context, 3) == 4
    assert general.best_window(["omega"], context, 5) == 0


def test_the_thresholds_are_the_ones_cross_validation_chose():
    # python -m benchmarks.wice_cv: the best rule set on all of WiCE dev, and on most folds
    assert (general.NAMES_LOST, general.GENERAL_THRESHOLD, general.WINDOW,
            general.WINDOW_THRESHOLD) == (1, 0.6, 5, 0.4)
