"""general.py: claims outside the financial vocabulary, by stems, names, clauses, negation."""

import pytest

from ragspine_eval.judges.financial.judge import FinancialJudge

PAGE = ("Media Play News is the voice of the home entertainment industry.\n"
        "Thomas K. Arnold was named publisher and editorial director in 2016.\n"
        "The magazine announced a new daily newsletter in 2018.\n"
        "The band did not tour Europe that year, and the album was not released until 2019.\n"
        "The festival is held every September in Lorne.")


@pytest.mark.parametrize(("claim", "supported", "rule"), [
    ("Arnold is the publisher and editorial director of Media Play News.", True, None),
    # stems: announcing / announced, newsletters / newsletter
    ("The magazine is announcing new daily newsletters.", True, None),
    ("Arnold is the publisher of Media Play News and Variety.", False, "name not found"),
    ("The magazine announced a daily newsletter, and plans a weekly podcast with guest hosts.",
     False, "unsupported words"),
    ("The album was not released until 2019.", True, None),
    ("The magazine did not announce a new daily newsletter.", False, "negation"),
    ("The magazine announced a new daily newsletter in 2017.", False, "period changed"),
    ("The festival is held every September in Lorne.", True, None),  # a month is no name
])
def test_the_general_path(claim, supported, rule):
    check = FinancialJudge().assess(claim, [PAGE])
    assert check.entailed is supported, check.detail
    if rule is not None:
        assert check.rule == rule, check.detail
