"""Our sentence chrF is sacrebleu's: the same score, to the last bit, for any pair of texts, counted
with numpy (a pip install) or without it (the server bundled in the .vsix)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from types import ModuleType

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from sacrebleu.metrics.chrf import CHRF

from ai_eval_lsp.core import chrf
from ai_eval_lsp.core.chrf import EXACT_ALPHABET, sentence_chrf, statistics

SACREBLEU = CHRF()


def load_without_numpy() -> ModuleType:
    """A copy of the chrF module as it loads where numpy is not installed."""
    spec = importlib.util.spec_from_file_location("chrf_without_numpy", chrf.__file__)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    saved = sys.modules.get("numpy")
    sys.modules["numpy"] = None  # type: ignore[assignment]  # `import numpy` now fails
    try:
        spec.loader.exec_module(module)
    finally:
        if saved is None:
            del sys.modules["numpy"]
        else:
            sys.modules["numpy"] = saved
    return module


WITHOUT_NUMPY = load_without_numpy()
BOTH_PATHS = pytest.mark.parametrize("scorer", [chrf, WITHOUT_NUMPY], ids=["numpy", "pure-python"])


def test_each_path_counts_as_its_name_says() -> None:
    assert chrf.COUNTS_WITH_NUMPY and chrf.statistics("ab", "ab") is not None
    assert not WITHOUT_NUMPY.COUNTS_WITH_NUMPY and WITHOUT_NUMPY.statistics("ab", "ab") is None


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
@BOTH_PATHS
def test_the_score_is_sacrebleus(scorer: ModuleType, hypothesis: str, reference: str) -> None:
    assert (
        scorer.sentence_chrf(hypothesis, reference) == SACREBLEU.sentence_score(hypothesis, [reference]).score
    )


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


def test_a_server_without_numpy_scores_chrf() -> None:
    """The bundled server's case: numpy cannot be imported at all, and a chrF check still scores."""
    code = (
        "import sys; sys.modules['numpy'] = None\n"
        "from ai_eval_lsp.core.api import Services\n"
        "print(repr(Services().chrf('a refund in five days', 'refunds take five days')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    expected = SACREBLEU.sentence_score("a refund in five days", ["refunds take five days"]).score / 100
    assert float(result.stdout) == expected
