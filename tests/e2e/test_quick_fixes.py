"""Every quick fix, applied by its edit's ranges as an editor applies them (in the negotiated
position encoding, after a non-ASCII character on the same line), leaves exactly the text it
promises, and its problem goes."""

from __future__ import annotations

import pytest
from pytest_lsp import LanguageClient

from e2e.helpers import change, diagnostics, fixed, open_document

HEAD = 'id: {name}\nversion: "1.0"\n'
TAIL = "scoring: {combine: all_pass}\n"


@pytest.mark.parametrize(
    ("name", "text", "code", "title", "after"),
    [
        (
            "key",
            HEAD + 'checks:\n  - {kind: regex, description: "naïve 😀", patern: x}\n' + TAIL,
            "unknown-key",
            "Change `patern` to `pattern`",
            HEAD + 'checks:\n  - {kind: regex, description: "naïve 😀", pattern: x}\n' + TAIL,
        ),
        (
            "kind",
            HEAD + 'checks:\n  - {description: "😀 é", kind: regexp, pattern: x}\n' + TAIL,
            "unknown-kind",
            "Change `regexp` to `regex`",
            HEAD + 'checks:\n  - {description: "😀 é", kind: regex, pattern: x}\n' + TAIL,
        ),
        (
            "version",
            "id: version\nversion: 1.10  # 😀 written as a number\nchecks:\n  - {kind: must_contain_any, values: [a]}\n"
            + TAIL,
            "schema",
            'Quote the version as "1.10"',
            'id: version\nversion: "1.10"  # 😀 written as a number\nchecks:\n  - {kind: must_contain_any, values: [a]}\n'
            + TAIL,
        ),
        (
            "weight",
            HEAD
            + "checks:\n  - id: a\n    kind: must_contain_any\n    values: [ä]\nscoring:\n  combine: weighted_avg\n"
            "  weights:\n    a: 1\n    gone: 2\n",
            "unused-weight",
            "Remove the weight `gone`",
            HEAD
            + "checks:\n  - id: a\n    kind: must_contain_any\n    values: [ä]\nscoring:\n  combine: weighted_avg\n"
            "  weights:\n    a: 1\n",
        ),
        (
            "field",
            HEAD + "checks:\n  - kind: regex  # 😀\n    flags: i\n" + TAIL,
            "schema",
            "Add the required field `pattern`",
            HEAD + "checks:\n  - kind: regex  # 😀\n    pattern: \n    flags: i\n" + TAIL,
        ),
    ],
)
async def test_a_quick_fix_leaves_the_text_it_promises(
    client: LanguageClient, name: str, text: str, code: str, title: str, after: str
) -> None:
    text = text.replace("id: {name}", f"id: fix_{name}")
    after = after.replace("id: {name}", f"id: fix_{name}")
    uri = await open_document(client, f"fix_{name}.rubric.yaml", text)
    (problem,) = [d for d in await diagnostics(client, uri) if d.code == code]
    found_title, result = await fixed(client, uri, text, problem)
    assert (found_title, result) == (title, after)
    await change(client, uri, 2, result)
    left = await diagnostics(client, uri, 2)
    assert not [d for d in left if d.code == code and d.range == problem.range], left
