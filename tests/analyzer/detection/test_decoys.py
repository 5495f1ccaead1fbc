"""What looks volatile but is not, per kind and language: knowledge cut-offs, examples, schemas,
few-shot turns and code samples, fixed ids in documentation, versions, prices, opening hours,
schedules, year- or month-only mentions, history, deployment settings and content slots.
(What is found is in test_kinds.py.)"""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile


def findings(text: str) -> list[tuple[str, str]]:
    return [(v.kind, v.value) for v in find_volatile(text) if v.kind != "today-phrase"]


CUT_OFFS = [
    "Knowledge cutoff: 2024-06",
    "Knowledge cutoff date: 2024-04-24",
    "Your training data goes up to April 2024.",
    "Your knowledge cut-off is 24 April 2024.",
    "Wissensstand: April 2024",
    "Deine Trainingsdaten reichen bis zum 24. April 2024.",
    "Date limite des connaissances : avril 2024",
    "Tes connaissances s'arrêtent au 24 avril 2024.",
    "Fecha de corte del conocimiento: 24 de abril de 2024",
    "Seu conhecimento vai até 24 de abril de 2024.",
    "La tua data di aggiornamento delle conoscenze è aprile 2024.",
    "知识截止日期：2024年4月",
    "你的训练数据截止到2024年4月24日。",
    "学習データは2024年4月24日までです。",
    "지식 기준일: 2024년 4월 24일",
    "Дата окончания обучения: 24 апреля 2024 г.",
    "Last updated: 2024-04-24",
    "This prompt was last revised on April 24, 2024.",
    "Claude 3.5 Sonnet was released on October 22, 2024.",
    "Model release date: 2024-10-22",
]
EXAMPLES = [
    "Example:\nCurrent time: 14:05:09",
    "For example, say 'Today is Thursday, April 24, 2025' when asked.",
    "Write dates as YYYY-MM-DD (e.g. 2025-04-24).",
    "Use ISO 8601, like 2025-04-24T14:05:09Z.",
    "<example>\nuser: what is the date?\nassistant: Today is April 24, 2025.\n</example>",
    "<examples>\nUser: What time is it?\nAssistant: It is 14:05 in Berlin.\n</examples>",
    "Beispiel: Heute ist der 24. April 2025.",
    "Exemple : nous sommes le 24 avril 2025.",
    "Ejemplo: hoy es 24 de abril de 2025.",
    "例如：今天是2025年4月24日。",
    "例：現在時刻は14:05です。",
    "```python\nprint(datetime.now())  # 2025-04-24 14:05:09\n```",
    '{"created_at": {"type": "string", "format": "date-time", "example": "2025-04-24T14:05:09Z"}}',
    '{"name": "get_weather", "parameters": {"date": {"type": "string", "description": "a date such as 2025-04-24"}}}',
    "If today were April 24, 2025, next Monday would be April 28, 2025.",
    "Suppose the current time is 14:05; the meeting at 15:00 is in 55 minutes.",
]
FIXED = [
    "Service UUID: 0000180d-0000-1000-8000-00805f9b34fb",
    "The nil UUID 00000000-0000-0000-0000-000000000000 is a constant.",
    "Our workspace id is 2f1d2c3b-4a59-4e7f-8c6d-5b4a3c2d1e0f (it never changes).",
    "anthropic-version: 2023-06-01",
    "Use API version 2024-02-15-preview.",
    "Model: gpt-4o-2024-08-06",
    "You are claude-3-5-sonnet-20241022.",
    "Python 3.11.4, Node v20.11.1, release 2.4.0",
]
MONEY_AND_HOURS = [
    "The Pro plan is $12.50 per month or €1.234,56 per year.",
    "Open Mon–Fri 09:00–17:00, Sat 10:00–14:00.",
    "Öffnungszeiten: Mo–Fr 9:00–18:00 Uhr",
    "Horaires : du lundi au vendredi de 9h à 18h.",
    "Horario: de 09:00 a 18:00 de lunes a viernes.",
    "营业时间：09:00-18:00",
    "Store hours are 9 AM to 5 PM; support is available 24/7.",
    "The daily standup is at 09:30 every day.",
    "Backups run every night at 02:00 UTC.",
    "Meetings: Monday 10:00, Wednesday 14:00, Friday 16:00.",
    "Each request may use at most 4,096 tokens.",
    "Limits: 16 GB memory, 200K context window.",
]
YEARS_AND_HISTORY = [
    "In 2024, the company opened a store in Lyon.",
    "Founded in 1998 in Berlin.",
    "Since March 2023 we ship to Austria.",
    "Q3 2024 results are in the report.",
    "The Berlin Wall fell on 9 November 1989.",
    "On July 20, 1969, Apollo 11 landed on the Moon.",
    "Orders placed before 2025-01-01 ship free.",
    "Die Aktion läuft bis zum 31. Dezember 2025.",
    "La promoción es válida hasta el 31 de diciembre de 2025.",
    "2024年4月，公司发布了新产品。",
    "As of January 2024, the policy changed.",
]
SETTINGS_AND_SLOTS = [
    "Timezone: Europe/Berlin",
    "Model: gpt-4o. OS: linux. Shell: /bin/zsh.",
    "Answer the question: {question}\nContext:\n{context}\nHistory: {chat_history}",
    "User input: {input}. Query: {{query}}. Message: ${message}",
    "Documents:\n{{documents}}\nTools: {tools} ({tool_names}). {format_instructions}",
    "Role: {user_role}. Respond in {language}. Time limit: {time_limit}s. Format: {date_format}.",
    "The invoice {invoice_date} and the order {created_date} are the customer's.",
    "Today is a good day to learn. What time is it where you are?",
    "The assistant's name is {name}.",
]


@pytest.mark.parametrize("text", CUT_OFFS)
def test_cut_offs_and_release_dates_in_each_language(text):
    assert findings(text) == []


@pytest.mark.parametrize("text", EXAMPLES)
def test_examples_schemas_few_shots_and_code_samples(text):
    assert findings(text) == []


@pytest.mark.parametrize("text", FIXED)
def test_fixed_ids_and_versions(text):
    assert findings(text) == []


@pytest.mark.parametrize("text", MONEY_AND_HOURS)
def test_prices_opening_hours_schedules_and_limits(text):
    assert findings(text) == []


@pytest.mark.parametrize("text", YEARS_AND_HISTORY)
def test_years_months_history_and_deadlines(text):
    assert findings(text) == []


@pytest.mark.parametrize("text", SETTINGS_AND_SLOTS)
def test_deployment_settings_and_content_slots(text):
    assert findings(text) == []
