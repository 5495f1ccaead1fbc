"""analyzer.detection.keptmemory: a memory kept for the user or the agent under a heading that names
it, as a slot alone under the heading or as the rendered lines there; a section about memory (its
instructions), memories found for this request and other slots are not."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile


@pytest.mark.parametrize(
    "text",
    [
        "# Long-term Memory\n{x}\n\n",
        "# Core Memory\n{data}\n",
        "<memory>\n{{ notes }}\n</memory>",
        "### コアメモリ\n{y}\n",
    ],
)
def test_a_slot_alone_under_a_kept_memory_heading_is_a_memory_block(text):
    assert [v.reason for v in find_volatile(text)] == [
        "a memory block rendered per session, under its heading"
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Relevant memories:\n{text}\n",  # found for this request: content
        "# Memory\nUse it well: {x}\n",  # not alone on its line
        "# Memory tips\n{x}\n",  # a heading about memory, not one
        "<memory>\n{{ content }}\n</memory>",  # a content slot stays content
    ],
)
def test_other_slots_near_memory_words_are_not(text):
    assert find_volatile(text) == []


@pytest.mark.parametrize(
    ("text", "block"),
    [
        (
            "Durable memory:\n- Prefers short answers.\n- Has a dog called Rex.\n\nAnswer briefly.",
            "Has a dog",
        ),
        ("# Long-term Memory\nAna likes tea and works nights.\n\n## Rules", "Ana likes tea"),
        # a block ends at its closing tag; headings in other languages name one
        (
            "<memory>\n- Prefers short answers.\n- Has a dog called Rex.\n</memory>\n\nStay in role.",
            "Has a dog",
        ),
        ("## Memoria a largo plazo\n- Prefiere respuestas cortas.\n- Tiene un perro.\n\nSé breve.", "perro"),
        ("GEÇMİŞ TURLAR (hafızan):\n- Tur 3: pil dolu.\n- Tur 4: satış.\n\nKısa ol.", "satış"),
        ("## Долгосрочная память\n- Любит чай.\n\n## Правила", "Любит"),
        ("### 长期用户记忆\n- 喜欢喝茶。\n- 晚上工作。\n\n规则", "喝茶"),
        ("HAFIZA:\n- Kedisini seviyor\n- Ankarada yaşıyor\n\nKısa ol.", "Kedisini"),  # upper case, Turkish
        ("## Uzun süreli bellek\n- Kedisini seviyor\n\nKısa ol.", "Kedisini"),
        ("İ" * 40 + "\nHafıza:\n- Kedisini seviyor\n\nKısa ol.", "Kedisini"),  # "İ" lowers to two characters
    ],
)
def test_the_rendered_lines_under_a_kept_memory_heading_are_one_block(text, block):
    found = [v for v in find_volatile(text) if v.kind == "state"]
    assert len(found) == 1 and block in found[0].value and "\n\n" not in found[0].value
    assert "</" not in found[0].value


@pytest.mark.parametrize(
    "text",
    [
        "Memory:\nThe assistant must never store passwords.",  # a section about memory: instructions
        "## Memory\n- Always check memory first.\n",
        "Relevant memories:\n- likes tea\n",  # found for this request: content
        "Core memory:\n<human>\nAna\n</human>",  # a tag: its own rules
        "Example:\nCore memory:\n- likes tea",
    ],
)
def test_no_block_where_the_lines_are_instructions_content_tags_or_examples(text):
    assert [v for v in find_volatile(text) if v.kind == "state"] == []


@pytest.mark.parametrize(
    "text",
    [
        "## Memorias relevantes\n- le gusta el té\n",  # found for this request: content
        "## 相关记忆\n- 喜欢喝茶\n",
        "Ejemplo:\n## Memoria\n- le gusta el té",  # an example
        "## Une mémoire d'éléphant pour les règles\n- Always answer in French.\n",  # instructions
    ],
)
def test_no_block_under_other_languages_headings_of_found_memories_examples_or_rules(text):
    assert [v for v in find_volatile(text) if v.kind == "state"] == []


def test_a_configs_memory_settings_are_no_memory_block():
    yaml = "        memory:\n          enabled: false\n          window:\n            enabled: false\n            size: 10\n"
    assert [v for v in find_volatile(yaml) if v.kind == "state"] == []


def test_a_rendered_memory_opening_with_a_key_like_line_is_still_one():
    text = "## Memory\nType: type 2 diabetic\nPrefers metric units\nLives in Lisbon\n"
    assert [v.kind for v in find_volatile(text)] == ["state"]
