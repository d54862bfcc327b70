"""Generated rubrics for benchmarks: N checks mixing six kinds, 1 % of them broken when asked."""

from __future__ import annotations

_CHECKS = (
    '  - id: c{i}\n    kind: must_contain_any\n    values: ["refund", "sorry", "apolog"]\n    case_sensitive: false\n',
    "  - id: c{i}\n    kind: regex\n    pattern: '^(hello|hi)\\s+world$'\n    flags: im\n",
    "  - id: c{i}\n    kind: target_match\n    source: expected.reference\n    mode: chrf\n    threshold: 0.6\n",
    '  - id: c{i}\n    kind: must_not_contain\n    values:\n      - "As an AI"\n      - "I cannot"\n',
    "  - id: c{i}\n    kind: llm_judge\n    description: Judge politeness\n    judges: [a, b]\n",
    "  - id: c{i}\n    kind: composite\n    rubric: tone\n",
)
_BROKEN = (
    "  - id: c{i}\n    kind: regex\n    patern: x\n",
    "  - id: c{i}\n    kind: target_match\n    source: expected.reference\n    threshold: 1.5\n",
    "  - id: c{i}\n    kind: must_contain_any\n",
    "  - id: c{i}\n    kind: regexp\n",
)


def rubric(checks: int, broken: bool = False) -> str:
    every = max(checks // max(checks // 100, 1), 1) if broken else 0
    parts = ['# yaml-language-server: $schema=rubric.schema.json\nid: big\nversion: "1.0"\nchecks:\n']
    for i in range(checks):
        if i % 10 == 0:
            parts.append(f"  # group {i // 10}\n")
        if broken and i % every == every // 2:
            parts.append(_BROKEN[(i // every) % len(_BROKEN)].format(i=i))
        else:
            parts.append(_CHECKS[i % len(_CHECKS)].format(i=i))
    parts.append("scoring:\n  combine: weighted_avg\n  threshold: 0.7\n")
    return "".join(parts)


TONE = 'id: tone\nversion: "1.0"\nchecks:\n  - {kind: must_contain_any, values: [please]}\nscoring: {combine: all_pass}\n'


_REALISTIC = (
    ("tone", "must_contain_any", 'values: ["thank you", "merci", "danke"]\n    case_sensitive: false'),
    ("apology", "must_contain_any", 'values: ["sorry", "apolog"]'),
    ("greeting", "must_contain_any", "values:\n      - hello\n      - hi there\n      - good morning"),
    ("order_ref", "must_contain_any", 'values: ["order #", "order number"]'),
    ("refund_word", "must_contain_any", "values: [refund, reimburse]"),
    ("no_ai_talk", "must_not_contain", 'values: ["As an AI", "language model"]'),
    ("no_blame", "must_not_contain", "values:\n      - your fault\n      - you should have"),
    ("no_promise", "must_not_contain", 'values: ["guarantee", "promise"]\n    case_sensitive: true'),
    ("no_slang", "must_not_contain", "values: [gonna, wanna, y'all]"),
    ("greets_first", "regex", "pattern: '^(hello|hi|dear)\\b'\n    flags: im"),
    ("signs_off", "regex", "pattern: '(regards|cheers|best),?\\s*$'\n    flags: i"),
    ("no_shouting", "regex", "pattern: '[A-Z]{8,}'\n    must_match: false"),
    ("has_date", "regex", "pattern: '\\d{4}-\\d{2}-\\d{2}'"),
    ("has_amount", "regex", "pattern: '\\$\\d+(\\.\\d\\d)?'\n    flags: u"),
    ("matches_answer", "target_match", "source: expected.reference\n    mode: chrf\n    threshold: 0.6"),
    ("exact_code", "target_match", "source: expected.code\n    mode: exact"),
    ("same_summary", "target_match", "source: expected.summary\n    mode: normalized"),
    ("title_close", "target_match", "source: expected.title\n    mode: chrf\n    threshold: 0.45"),
    ("answer_close", "target_match", "source: expected.answer\n    mode: chrf"),
    ("policy_text", "target_match", "source: expected.policy\n    mode: normalized"),
    ("label_exact", "target_match", "source: expected.label"),
    ("style_guide", "composite", "rubric: house_style"),
    ("legal_terms", "composite", "rubric: legal_review@2.1"),
    ("brand_voice", "composite", "rubric: brand_voice"),
    ("safety_net", "composite", "rubric: safety_base@1.0.0"),
    ("polite", "llm_judge", "judges: [gpt_a, claude_b]\n    aggregation: mean\n    threshold: 0.7"),
    ("helpful", "llm_judge", "judges:\n      - gpt_a\n      - claude_b\n    aggregation: majority"),
    ("accurate", "llm_judge", "judge_prompt_ref: prompts/accuracy.md\n    threshold: 0.8"),
    ("empathic", "llm_judge", "judges: [claude_b]"),
    ("uses_search", "tool_usage", "tools: [search, fetch_order]\n    order_matters: true"),
    ("uses_refund", "tool_usage", "tools:\n      - refund_api"),
    ("no_tools", "tool_usage", "tools: []"),
    (
        "tests_pass",
        "command",
        "run: vendor/bin/phpunit --filter Refund\n    sandbox: ddev\n    expect: exit_zero",
    ),
    ("lint_clean", "command", "run: composer lint\n    setup: none"),
    (
        "patch_fixes",
        "command",
        "run: ./scripts/check-fix\n    setup: apply_patch\n    expect: test_transitions",
    ),
    ("faster", "score_delta", "metric: latency_ms\n    min_delta: -50"),
    ("better_recall", "score_delta", "metric: recall\n    min_delta: 0.05"),
    ("json_reply", "json_schema", "schema:\n      type: object\n      required: [answer]"),
    ("json_order", "json_schema", "schema: {type: object, properties: {order: {type: string}}}"),
    ("json_list", "json_schema", "schema:\n      type: array\n      minItems: 1"),
    ("php_ok", "php_lint", ""),
    ("php_module", "php_lint", ""),
    ("md_sections", "markdown_structure", "required_headings: [Summary, Steps]"),
    ("md_faq", "markdown_structure", "required_headings:\n      - Question\n      - Answer"),
    ("md_notes", "markdown_structure", "required_headings: [Notes]"),
    ("is_json", "format", "format: json"),
    ("is_markdown", "format", "format: markdown"),
    ("facts_refund", "fact_match", "facts: [refunds take five days, the fee is waived]"),
    (
        "facts_order",
        "fact_match",
        "facts:\n      - the order shipped on Monday\n      - tracking is by email",
    ),
    ("facts_policy", "fact_match", "facts: [returns within 30 days]"),
)
"""A 50-check rubric of the 14 core kinds as authors write them: 28 of the checks get a
diagnostic (24 of kinds not executed, 4 composites naming rubrics that do not exist)."""

_EMOJI = ("🙂", "✅", "🚀", "📦", "⚠️", "💬", "🔍")


def realistic(repeats: int) -> str:
    """`_REALISTIC`'s checks `repeats` times with fresh ids, each with a description, a metadata
    map with tags, and emoji: 1,333 repeats are a ~10 MB rubric of 66,650 checks."""
    parts = ['id: support_quality\nversion: "3.2.0"\nlabel: Support replies 💬\nchecks:\n']
    for repeat in range(repeats):
        for number, (name, kind, fields) in enumerate(_REALISTIC):
            emoji = _EMOJI[(repeat + number) % len(_EMOJI)]
            parts.append(
                f"  - id: {name}_{repeat}\n    kind: {kind}\n"
                f"    description: {name.replace('_', ' ').capitalize()} {emoji}\n"
                f"    metadata: {{tags: [cx, {kind[:5]}]}}\n" + (f"    {fields}\n" if fields else "")
            )
    parts.append("scoring:\n  combine: weighted_avg\n  threshold: 0.7\n")
    return "".join(parts)
