"""analyzer.detection.loops: a template loop over per-user or per-session data is one rendered block;
a loop over fixed data, or one left unclosed, is not."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile


def values(text: str) -> list[str]:
    return [v.value for v in find_volatile(text)]


@pytest.mark.parametrize(
    "loop",
    [
        "{% for item in customer.orders %}\nname: {{item.name}}\n{% endfor %}",
        "{%- for chat in recent_chats -%}- {{ chat.title }} ({{ chat.date }}){%- endfor %}",
        "{{range .CurrentState.Memories}}{{.}} {{end}}",
        "{{- range $i, $m := .Memories }}{{ if $i }}, {{ end }}{{ $m }}{{ end }}",
        "{{#each recent_chats}}- {{this.title}}{{/each}}",
        # nested loops: the block ends at the outer loop's own closing tag
        "{% for order in customer.orders %}{% for line in order.lines %}- {{line}}\n{% endfor %}total{% endfor %}",
        "{{#each recent_chats}}{{#each this.tags}}#{{this}} {{/each}}- {{this.title}}{{/each}}",
    ],
)
def test_a_loop_over_volatile_data_is_one_block(loop):
    assert values(f"What you know:\n{loop}\nAnswer briefly.") == [loop]


@pytest.mark.parametrize(
    "loop",
    [
        "{% for tool in tools %}- {{ tool.name }}\n{% endfor %}",
        "{{range .Examples}}{{.}}{{end}}",
        "{% for item in customer.orders %}\nname: {{item.name}}\n",  # never closed
    ],
)
def test_a_loop_over_fixed_data_or_unclosed_is_not(loop):
    assert values(f"What you know:\n{loop}\nAnswer briefly.") == []


@pytest.mark.parametrize(
    "loop",
    [
        "{{#each recent_chats}}- {{this.title}}{{~/each~}}",
        "{{~#each recent_chats~}}- {{this.title}}{{~/each~}}",
        "{{#each recent_chats}}{{#each this.tags}}#{{this}}{{~/each}}- {{this.title}}{{/each}}",
        "{% for c in recent_chats %}{% for t in c.tags if loop.index % 2 %}#{{t}}{% endfor %} {{c.title}}\n{% endfor %}",
        "{% for c in recent_chats %}{% for t in c.tags\n %}#{{t}}{% endfor %}{{c.title}}{%+ endfor %}",
    ],
)
def test_whitespace_control_and_tags_with_odd_insides_still_close_in_order(loop):
    assert values(f"What you know:\n{loop}\nAnswer briefly.") == [loop]


def test_a_field_of_the_items_of_a_loop_over_fixed_or_content_data_is_not_judged_by_its_name():
    text = "Recent:\n{% for m in recent_messages %}\n- ({{ m.timestamp_iso }}) {{ m.author }}: {{ m.content }}\n{% endfor %}\n"
    assert find_volatile(text) == []
    tools = "{% for tool in tools %}{{ tool.name }} (added {{ tool.created_at }}){% endfor %}"
    assert find_volatile(tools) == []


def test_the_same_field_outside_its_loop_or_of_another_name_is():
    after = "{% for m in messages %}{{ m.content }}{% endfor %}\nSent at {{ m.timestamp_iso }}"
    assert [v.value for v in find_volatile(after)] == ["{{ m.timestamp_iso }}"]
    other = "{% for m in messages %}{{ m.content }} ({{ session.current_time }}){% endfor %}"
    assert [v.value for v in find_volatile(other)] == ["{{ session.current_time }}"]


def test_an_outer_loops_item_is_seen_through_an_inner_loop_and_an_unclosed_loop_is_no_loop():
    nested = "{% for m in messages %}{% for t in m.tags %}{{ t }}{% endfor %}({{ m.sent_at }}){% endfor %}"
    assert find_volatile(nested) == []
    unclosed = "History:\n{% for m in recent_messages %}\n- {{ m.timestamp }}: {{ m.content }}\n"
    assert [v.value for v in find_volatile(unclosed)] == ["{{ m.timestamp }}"]
