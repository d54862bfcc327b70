"""Our sentence chrF is sacrebleu's: the same score, to the last bit, for any pair of texts."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from sacrebleu.metrics.chrf import CHRF

from ai_eval_lsp.core.chrf import EXACT_ALPHABET, sentence_chrf, statistics

SACREBLEU = CHRF()

# Words over a small alphabet, so n-grams repeat and match; any character, surrogates included.
WORDY = st.lists(
    st.sampled_from(["sorry", "refund", "five", "days", "é", "🙏", "日本", "a", " ", "\n", "\t"]), max_size=60
).map("".join)
ANY = st.text(st.characters(exclude_categories=()), max_size=80)


@given(hypothesis=st.one_of(WORDY, ANY), reference=st.one_of(WORDY, ANY))
@example("", "")
@example("a", "")
@example("", "a")
@example("a b c", "abc")
@example("xxx", "x")
@example("\ud83d\ude4f ok", "\ud83d ok")  # lone surrogates, as YAML's \u escapes give them
@example("\x1c\x1d tab\u2028sep", "tab sep")  # whitespace str.split knows beyond ASCII
def test_the_score_is_sacrebleus(hypothesis: str, reference: str) -> None:
    assert sentence_chrf(hypothesis, reference) == SACREBLEU.sentence_score(hypothesis, [reference]).score


def test_a_pair_past_the_exact_alphabet_is_scored_by_sacrebleu() -> None:
    wide = "".join(chr(0x4E00 + i) for i in range(EXACT_ALPHABET + 1))
    assert statistics(wide, wide[::-1]) is None
    assert sentence_chrf(wide, wide[:900]) == SACREBLEU.sentence_score(wide, [wide[:900]]).score


@pytest.mark.parametrize("size", [EXACT_ALPHABET - 1, EXACT_ALPHABET])
def test_the_widest_exact_alphabet_counts_six_grams_without_overflow(size: int) -> None:
    text = "".join(chr(0x4E00 + i) for i in range(size))
    other = text[size // 2 :] + text[: size // 2]
    assert statistics(text, other) is not None
    assert sentence_chrf(text, other) == SACREBLEU.sentence_score(text, [other]).score
