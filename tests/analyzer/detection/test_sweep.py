"""A robustness sweep of the detector: short system-prompt lines as real apps render them.

Each FOUND line holds one rendered per-request value (the current date or time in many languages
and formats, ids under labels, budgets and readings) that :func:`analyzer.detect.find_volatile`
must find; each DECOY line holds a fixed value that looks like one (a cut-off, a release date, a
schema's example, a version, a price, opening hours) and must give no finding at all. Written
from how apps render these values, not from the labelled corpus.
"""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile

#: (line, the rendered value that must be found in it)
FOUND = [
    # English: labels, clauses, formats
    ("Current date: 2025-04-24", "2025-04-24"),
    ("Today's date is Thursday, 24 April 2025.", "24 April 2025"),
    ("The current date is April 24, 2025.", "April 24, 2025"),
    ("Current date and time: 4/26/2025, 1:52:03 PM", "1:52:03 PM"),
    ("Current time: 2025-04-24T14:05:09+02:00", "2025-04-24T14:05:09+02:00"),
    ("Current UTC: 2025-04-24T12:05:09Z", "2025-04-24T12:05:09Z"),
    ("Current UTC time: 12:05", "12:05"),
    ("Always use today's date, which is 2025-04-24, when answering.", "2025-04-24"),
    ("Use the current date, which is Thursday, April 24, 2025, for relative dates.", "April 24, 2025"),
    ("Yesterday was Wednesday, April 23, 2025.", "April 23, 2025"),
    ("Tomorrow is Friday, April 25, 2025.", "April 25, 2025"),
    ("It is currently 14:05 on Thursday.", "14:05"),
    ("Now: 2025-04-24 14:05:09", "2025-04-24 14:05:09"),
    ("The time now is 2:05 PM.", "2:05 PM"),
    ("Date: Thu, 24 Apr 2025 14:05:09 GMT", "14:05:09"),
    ("Local time: 14:05 (Europe/Berlin)", "14:05"),
    ("As of 2025-04-24 14:05 UTC, the following applies.", "2025-04-24 14:05"),
    ("You are chatting at 14:05:09 local time.", "14:05:09"),
    ("Timestamp: 1745503509", "1745503509"),
    ("Request received at 1745503509123.", "1745503509123"),
    ("now_ms=1745503509123", "1745503509123"),
    ("The current epoch time is 1745503509.", "1745503509"),
    ("Server time: 14:05:09", "14:05:09"),
    ("Fecha de hoy: 2026-03-05", "2026-03-05"),
    ("Timezone: {{ user.tz }}", "{{ user.tz }}"),
    ("Heure actuelle : 10h30", "10h30"),
    ("当前时间：2026年3月5日 16:00", "16:00"),
    ("Memory usage: 15%", "15%"),
    ("Disk usage: 71% (213/300 GB)", "71%"),
    ("You have used 4,512 of 200,000 tokens.", "4,512"),
    ("Current branch: feature/payments-v2", "feature/payments-v2"),
    ("Request time: 2025-04-24 14:05", "2025-04-24 14:05"),
    ("Time of request: 2025-04-24 14:05", "2025-04-24 14:05"),
    ("Date and time: 24 April 2025, 14:05", "24 April 2025"),
    ("current_time: 2025-04-24 14:05", "2025-04-24 14:05"),
    ("The date today is 24/04/2025.", "24/04/2025"),
    ("Today: 2025/04/24", "2025/04/24"),
    # Chinese, Japanese, Korean
    ("当前日期：2025年4月24日", "2025年4月24日"),
    ("当前时间：2025-04-24 14:05:09", "2025-04-24 14:05:09"),
    ("现在时间是2025年04月24日 14:05", "2025年04月24日"),
    ("今天是2025年4月24日，星期四。", "2025年4月24日"),
    ("今日の日付：2025年4月24日", "2025年4月24日"),
    ("現在の日時は2025年4月24日 14時05分です。", "2025年4月24日"),
    ("現在時刻: 14:05", "14:05"),
    ("오늘 날짜: 2025년 4월 24일", "2025년 4월 24일"),
    ("현재 시간: 오후 2시 5분", "2시 5분"),
    ("현재 날짜는 2025-04-24입니다.", "2025-04-24"),
    # German, French, Spanish, Portuguese, Italian, Dutch
    ("Heute ist Donnerstag, der 24. April 2025.", "24. April 2025"),
    ("Aktuelles Datum: 24.04.2025", "24.04.2025"),
    ("Aktuelle Uhrzeit: 14:05 Uhr", "14:05"),
    ("Nous sommes le jeudi 24 avril 2025.", "24 avril 2025"),
    ("Date actuelle : 24/04/2025", "24/04/2025"),
    ("Il est actuellement 14h05.", "14h05"),
    ("Hoy es jueves, 24 de abril de 2025.", "24 de abril de 2025"),
    ("Fecha actual: 24/04/2025", "24/04/2025"),
    ("Hora actual: 14:05", "14:05"),
    ("Hoje é quinta-feira, 24 de abril de 2025.", "24 de abril de 2025"),
    ("Data atual: 24/04/2025", "24/04/2025"),
    ("Oggi è giovedì 24 aprile 2025.", "24 aprile 2025"),
    ("Data odierna: 24/04/2025", "24/04/2025"),
    ("Vandaag is het donderdag 24 april 2025.", "24 april 2025"),
    ("Huidige datum: 24-04-2025", "24-04-2025"),
    # Russian, Polish, Turkish, Arabic, Hindi
    ("Сегодня 24 апреля 2025 года.", "24 апреля 2025"),
    ("Текущая дата: 24.04.2025", "24.04.2025"),
    ("Текущее время: 14:05", "14:05"),
    ("Dzisiaj jest czwartek, 24 kwietnia 2025 r.", "24 kwietnia 2025"),
    ("Aktualna data: 24.04.2025", "24.04.2025"),
    ("Bugün 24 Nisan 2025, Perşembe.", "24 Nisan 2025"),
    ("Güncel tarih: 24.04.2025", "24.04.2025"),
    ("التاريخ الحالي: 2025-04-24", "2025-04-24"),
    ("الوقت الحالي: 14:05", "14:05"),
    ("आज की तारीख: 24/04/2025", "24/04/2025"),
    ("वर्तमान समय: 14:05", "14:05"),
    # session, trace and request ids under labels
    ("Session ID: 3f2b9c1e-8d4a-4b6f-9e2a-1c3d5e7f9a0b", "3f2b9c1e-8d4a-4b6f-9e2a-1c3d5e7f9a0b"),
    ("Request ID: req_8f7a6b5c4d3e2f1a0b9c", "req_8f7a6b5c4d3e2f1a0b9c"),
    ("trace_id=4bf92f3577b34da6a3ce929d0e0e4736", "4bf92f3577b34da6a3ce929d0e0e4736"),
    ("Conversation: 01HZX3T8K9QW2M5R7V4N6B8C0D", "01HZX3T8K9QW2M5R7V4N6B8C0D"),
    ("Run id: 0190f5b2-7c3e-7a4d-9b1f-2e3d4c5b6a7f", "0190f5b2-7c3e-7a4d-9b1f-2e3d4c5b6a7f"),
    ("session=V1StGXR8_Z5jdHi6B-myT", "V1StGXR8_Z5jdHi6B-myT"),
    ("Correlation-Id: 9f86d081884c7d65", "9f86d081884c7d65"),
    ("Your chat id is chat_4kH8sP2qL9mZ7xR3.", "chat_4kH8sP2qL9mZ7xR3"),
    ("Message ID: msg_01XFDUDYJgAACzvnptvVoYEL", "msg_01XFDUDYJgAACzvnptvVoYEL"),
    ("Thread: thread_abc123XYZ789def456", "thread_abc123XYZ789def456"),
    # budgets, steps, readings
    ("Remaining tokens: 151787", "151787"),
    ("Token budget remaining: 48213 tokens", "48213"),
    ("You have 7 steps remaining.", "7"),
    ("You are on step 3 of 10.", "3"),
    ("Free memory: 12.4 GB", "12.4 GB"),
    ("Context window used: 63%", "63%"),
    ("Battery level: 82%", "82%"),
    ("You are on iteration 4 of 25.", "4"),
    ("Credits left: 1,250", "1,250"),
    ("Tool calls remaining this turn: 12", "12"),
    # more shapes apps render
    ("The current date and time is Thursday, April 24, 2025 at 2:05 PM.", "April 24, 2025"),
    ("Current datetime (UTC): 2025-04-24 12:05:09.123456", "2025-04-24 12:05:09.123456"),
    ("It's 2:05 PM on Thursday, April 24, 2025.", "2:05 PM"),
    ("Date/time: Thu Apr 24 2025 14:05:09 GMT+0200 (Central European Summer Time)", "14:05:09"),
    ("当前北京时间：2025-04-24 14:05", "2025-04-24 14:05"),
    ("Current week: 2025-W17", "2025-W17"),
    ("You are speaking with the user at 14:05 their local time.", "14:05"),
    ("Request started at 2025-04-24T12:05:09.512Z.", "2025-04-24T12:05:09.512Z"),
    ("User's timezone: Europe/Warsaw", "Europe/Warsaw"),
    ("The user's name is Ana.", "Ana"),
    ("Trace ID: 0af7651916cd43dd8448eb211c80319c", "0af7651916cd43dd8448eb211c80319c"),
    ("X-Request-Id: 7f9c2ba4-e88f-4d2c-b1a3-5c6d7e8f9a0b", "7f9c2ba4-e88f-4d2c-b1a3-5c6d7e8f9a0b"),
    ("Available memory: 3.2 GB", "3.2 GB"),
    ("Tokens used so far: 18,412", "18,412"),
    # template slots
    ("Today is {{ current_date }}.", "{{ current_date }}"),
    ("The time is {now:%H:%M}.", "{now:%H:%M}"),
    ("Session: {session_id}", "{session_id}"),
    ("Hello {{firstName}}, how can I help?", "{{firstName}}"),
    ("Current date: ${new Date().toISOString()}", "${new Date().toISOString()}"),
]

DECOYS = [
    "Knowledge cutoff: 2024-06-01",
    "Your knowledge cut-off is October 2023.",
    "Training data up to 2023-12.",
    "Version 2.3.1 was released on 2024-03-15.",
    "Released March 3, 2019.",
    "## [1.4.0] - 2024-11-02",
    "anthropic-version: 2023-06-01",
    "API version 2024-02-15-preview",
    'Return JSON like {"created_at": "2024-01-01T00:00:00Z"}.',
    'Example: {"timestamp": "2023-05-01T12:00:00Z", "id": "abc"}',
    "Dates must use the format YYYY-MM-DD, e.g. 2024-01-31.",
    "Times look like 14:30 or 2:30 PM.",
    "For example, 3/14/2024 is Pi Day.",
    "Use an id such as 550e8400-e29b-41d4-a716-446655440000 in tests.",
    "The nil UUID is 00000000-0000-0000-0000-000000000000.",
    "The Bluetooth base UUID is 00000000-0000-1000-8000-00805F9B34FB.",
    "Namespace UUID for URLs: 6ba7b811-9dad-11d1-80b4-00c04fd430c8",
    "Deployment timezone: Europe/Berlin",
    "All times are in UTC+05:30.",
    "Server timezone is America/New_York.",
    "The Pro plan costs $12.50 per month.",
    "Prices: €9.99 for 1,000 credits.",
    "Opening hours: 09:00-17:00 Monday to Friday.",
    "We are open from 9:00 to 18:00 on weekdays.",
    "The shop closes at 20:00 on Saturdays.",
    "Business hours: Mon–Fri 08:30–17:30.",
    "The company was founded in 1998.",
    "The Treaty of Versailles was signed on 28 June 1919.",
    "Python 3.12.4 and Node 20.11.1 are installed.",
    "Max tokens: 4096",
    "The context window is 128000 tokens.",
    "Use at most 5 tool calls per turn.",
    "Call 1-800-555-0199 for support.",
    "The fix landed in commit 3f2a9c1d8e7b6a5f4c3d2e1f0a9b8c7d6e5f4a3b.",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "Order numbers look like ORD-2024-000123.",
    "The ratio is 16:9 and the score was 3-2.",
    "Daily standup is at 09:30.",
    "Maintenance window: Sundays 02:00–04:00 UTC.",
    "The offer expires on 2025-12-31.",
    "Your birthday field is stored as YYYY-MM-DD.",
    "Chapter 12 of the 2001 edition covers this.",
    "Schedule the meeting for 2025-05-02 at 10:00.",
    "Write times in 24-hour format (e.g. 13:45).",
    "The API key header is X-Api-Key.",
    "Dataset snapshot: 2023-09-30",
    "Last updated: 2025-03-02.",
    "The model was trained on data through April 2024.",
    "Our fiscal year 2024 ended on 2024-06-30.",
    "Copyright © 2025 Acme Inc.",
    "Use ISO 8601 timestamps such as 2025-01-01T00:00:00Z.",
    "Store request ids as UUIDs (like 123e4567-e89b-12d3-a456-426614174000).",
    "The checksum is 5d41402abc4b2a76b9719d911017c592.",
    "Limits: 16GB memory, 4 vCPU, timeouts of 30s.",
    "Respond within 2.5 seconds; retry at most 3 times.",
    "The event runs from 2025-06-01 to 2025-06-03.",
    "Holiday closures: 25 December 2025 and 1 January 2026.",
    "Follow RFC 3339 (2019-10-12T07:20:50.52Z is valid).",
    "Set temperature to 0.7 and top_p to 0.95.",
    "Born 14 March 1879 in Ulm.",
    "The office is at 221B Baker Street, London.",
    "Deadline for submissions: 2025-09-15.",
    "Session: quarterly-planning-notes-2025",
    "Product code 01HZX3T8K9QW2M5R7V4N6B8C0D",
    "Step 1 of 3: install the package.",
    "The nightly job runs at 03:00 local time.",
    "Release notes for 2025-W17 are below.",
    "The first 3 steps remaining in the guide are optional.",
    # a label naming another moment than now: an event's date or time
    "Get 20% off your first order.",
    "The default branch is main.",
    "# Customer Context\n- Plan: Pro",
    "Write the date as 'Monday, 1 January 2024' style.",
    'Exemple : "Planifie 3 révisions"\n→ create(\n    goalDateTime: "2025-12-20T09:00:00",\n)',
    "Check-in time: 15:00",
    "Hora de salida: 10:30",
    "Heure de départ : 10h30",
    "Data di consegna: 2026-01-15",
    "出発時刻：10:30",
    "会议时间：2026年3月5日 16:00",
    "- 營業時間:{{ company.hours }}",
    "営業時間：10:00",
    "영업시간: {{hours}}",
    "Write the time as '14:30'.",
    "Weather: 18 °C is typical for May.",
    "Cite a result, e.g. the 13th one, from a document titled Paris with ID 4f4915f6-2a0b-4eb5-85d1-352e00c125bb.",
    '{\n  "id": "chatcmpl-ASt77VsT3eC7VUOlwTe1TdpsyWUsT",\n  "object": "chat.completion",\n  "created": 1731448405\n}',
    'event: content_block_start\ndata: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"call_9pj9dwhddm2iqzwcxq1tgwp9","name":"Read"}}',
    "Next US election: November 7, 2028",
    "Horario de atención: de lunes a viernes a partir de las 09:00",
    "Waktu buka toko adalah 08:00",
    "//  Created by Hongshen on 12/4/2024.",
    "INSERT INTO t_prompts (id, content, created_at, name) VALUES (3, 'You are a helper.', '2025-03-05 03:19:32.531417', 'optimize', null);",
    "Delivery date: 2026-01-15",
    "Invoice date: 2026-01-15",
    "Date of issue: 2026-01-15",
    "Event time: 19:30",
    "Pickup time: 14:30",
    "Store closing time: 22:00",
    "Concert: Saturday, 14 June 2025, 19:30",
    "Posted on Saturday, 14 June 2025, 19:30",
    "Sale ends: 2025-12-01 23:59",
    "Check-in: 15 Jan 2026 14:00; check-out: 17 Jan 2026 11:00.",
]


@pytest.mark.parametrize("line, value", FOUND)
def test_a_rendered_value_is_found(line, value):
    found = [v for v in find_volatile(line) if v.kind != "today-phrase"]
    at = line.index(value)
    assert any(v.start < at + len(value) and at < v.end for v in found), (line, found)


@pytest.mark.parametrize("line", DECOYS)
def test_a_fixed_value_is_not(line):
    assert find_volatile(line) == [], line


def sweep() -> tuple[int, int]:
    """How many FOUND lines are found and how many DECOY lines give a finding (for the report)."""
    found = 0
    for line, value in FOUND:
        at = line.index(value)
        found += any(
            v.start < at + len(value) and at < v.end and v.kind != "today-phrase" for v in find_volatile(line)
        )
    return found, sum(bool(find_volatile(line)) for line in DECOYS)
