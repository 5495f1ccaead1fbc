"""Each volatile kind found, per language and format: dates with every month and weekday name of
:mod:`analyzer.detection.calendar` in a sentence of its own language, numeric dates in each locale
order, clock times, machine timestamps, label words, placeholders and session state.
(The decoys, what is not found, are in test_decoys.py.)"""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile

#: a sentence per language that says "today is" before a written-out date, and how its date reads
SENTENCES = {
    "en": ("Today is {wd}, {mon} {d}, {y}.", "{wd}, {mon} {d}, {y}"),
    "de": ("Heute ist {wd}, der {d}. {mon} {y}.", "{d}. {mon} {y}"),
    "de-at": ("Heute ist der {d}. {mon} {y}.", "{d}. {mon} {y}"),
    "fr": ("Nous sommes le {wd} {d} {mon} {y}.", "{wd} {d} {mon} {y}"),
    "es": ("Hoy es {wd}, {d} de {mon} de {y}.", "{wd}, {d} de {mon} de {y}"),
    "pt": ("Hoje é {wd}, {d} de {mon} de {y}.", "{wd}, {d} de {mon} de {y}"),
    "it": ("Oggi è {wd} {d} {mon} {y}.", "{wd} {d} {mon} {y}"),
    "nl": ("Vandaag is het {wd} {d} {mon} {y}.", "{d} {mon} {y}"),
    "ru": ("Сегодня {d} {mon} {y} г., {wd}.", "{d} {mon} {y} г., {wd}"),
    "uk": ("Сьогодні {d} {mon} {y} року, {wd}.", "{d} {mon} {y} року"),
    "pl": ("Dzisiaj jest {wd}, {d} {mon} {y} r.", "{d} {mon} {y} r."),
    "tr": ("Bugün {d} {mon} {y} {wd}.", "{d} {mon} {y}"),
    "sv": ("Idag är det {wd} den {d} {mon} {y}.", "{d} {mon} {y}"),
}
MONTHS = {
    "en": "January February March April May June July August September October November December",
    "de": "Januar Februar März April Mai Juni Juli August September Oktober November Dezember",
    "de-at": "Jänner Feber März April Mai Juni Juli August September Oktober November Dezember",
    "fr": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "es": "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
    "pt": "janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro",
    "it": "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre",
    "nl": "januari februari maart april mei juni juli augustus september oktober november december",
    "ru": "января февраля марта апреля мая июня июля августа сентября октября ноября декабря",
    "uk": "січня лютого березня квітня травня червня липня серпня вересня жовтня листопада грудня",
    "pl": "stycznia lutego marca kwietnia maja czerwca lipca sierpnia września października listopada grudnia",
    "tr": "Ocak Şubat Mart Nisan Mayıs Haziran Temmuz Ağustos Eylül Ekim Kasım Aralık",
    "sv": "januari februari mars april maj juni juli augusti september oktober november december",
}
WEEKDAYS = {
    "en": "Monday Tuesday Wednesday Thursday Friday Saturday Sunday",
    "de": "Montag Dienstag Mittwoch Donnerstag Freitag Samstag Sonntag",
    "de-at": "Montag Dienstag Mittwoch Donnerstag Freitag Samstag Sonntag",
    "fr": "lundi mardi mercredi jeudi vendredi samedi dimanche",
    "es": "lunes martes miércoles jueves viernes sábado domingo",
    "pt": "segunda-feira terça-feira quarta-feira quinta-feira sexta-feira sábado domingo",
    "it": "lunedì martedì mercoledì giovedì venerdì sabato domenica",
    "nl": "maandag dinsdag woensdag donderdag vrijdag zaterdag zondag",
    "ru": "понедельник вторник среда четверг пятница суббота воскресенье",
    "uk": "понеділок вівторок середа четвер пʼятниця субота неділя",
    "pl": "poniedziałek wtorek środa czwartek piątek sobota niedziela",
    "tr": "Pazartesi Salı Çarşamba Perşembe Cuma Cumartesi Pazar",
    "sv": "måndag tisdag onsdag torsdag fredag lördag söndag",
}
CASES = [
    (lang, i)
    for lang in SENTENCES
    for i in range(12)  # every month, each with one weekday of the seven in turn
]


def covered(text: str, value: str) -> bool:
    """Some finding other than a today-phrase covers ``value`` (its first occurrence) of ``text``."""
    a = text.index(value)
    return any(
        v.start <= a and a + len(value) <= v.end for v in find_volatile(text) if v.kind != "today-phrase"
    )


@pytest.mark.parametrize(("lang", "i"), CASES)
def test_every_month_and_weekday_name_in_a_today_sentence(lang, i):
    sentence, date = SENTENCES[lang]
    fill = {
        "wd": WEEKDAYS[lang].split()[i % 7],
        "mon": MONTHS[lang].split()[i],
        "d": str(3 + i * 2),
        "y": "2025",
    }
    text = "You are a helpful assistant.\n" + sentence.format(**fill) + "\nAnswer briefly."
    assert covered(text, date.format(**fill)), text


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # numeric dates in each locale order, under a label in its language
        ("Today's date: 04/24/2025", "04/24/2025"),
        ("Heute ist der 24.04.2025.", "24.04.2025"),
        ("Date du jour : 24/04/2025", "24/04/2025"),
        ("Fecha actual: 24-04-2025", "24-04-2025"),
        ("Data atual: 24/04/2025", "24/04/2025"),
        ("Дата: 24.04.2025", "24.04.2025"),
        ("当前日期：2025/04/24", "2025/04/24"),
        ("오늘 날짜: 2025. 4. 24.", "2025. 4. 24"),
        ("Dzisiejsza data: 24.04.2025", "24.04.2025"),
        ("Bugünün tarihi: 24.04.2025", "24.04.2025"),
        ("Dagens datum: 2025-04-24", "2025-04-24"),
        ("Current date: 2025.04.24", "2025.04.24"),
        # written dates in English orders and abbreviations
        ("Current date: Thu, Apr 24, 2025", "Apr 24, 2025"),
        ("Today is 24th April 2025.", "24th April 2025"),
        ("The date today is April 24th, 2025.", "April 24th, 2025"),
        ("Aujourd'hui : jeu. 24 avr. 2025", "24 avr. 2025"),
        ("Hoy: 24 abr. 2025", "24 abr. 2025"),
        ("Сегодня: 24 апр. 2025", "24 апр. 2025"),
        # CJK scripts
        ("今天是2025年4月24日，星期四。", "2025年4月24日"),
        ("今天是 2025 年 4 月 24 日", "2025 年 4 月 24 日"),
        ("今日は2025年4月24日（木曜日）です。", "2025年4月24日"),
        ("本日は令和7年4月24日です。", "令和7年4月24日"),
        ("오늘은 2025년 4월 24일 (목)입니다.", "2025년 4월 24일"),
        # clock times: 12/24 h, seconds, zones
        ("Current time: 14:05:09", "14:05:09"),
        ("The time is now 2:05 PM.", "2:05 PM"),
        ("Local time: 2:05:09 p.m. EST", "2:05:09 p.m."),
        ("Uhrzeit: 14:05 Uhr", "14:05"),
        ("Heure actuelle : 14h05", "14h05"),
        ("Hora actual: 14:05:09 (UTC-3)", "14:05:09"),
        ("Ora attuale: 14:05", "14:05"),
        ("Текущее время: 14:05", "14:05"),
        ("現在時刻：14時05分", "14時05分"),
        ("当前时间：下午2点05分", "2点05分"),
        ("현재 시각: 오후 2시 5분", "2시 5분"),
        ("It is 14:05 UTC+02:00 now.", "14:05"),
        # machine timestamps
        ("Now: 2025-04-24T14:05:09.123Z", "2025-04-24T14:05:09.123Z"),
        ("generated 2025-04-24T14:05:09+02:00 by the server", "2025-04-24T14:05:09+02:00"),
        ("Date: Thu, 24 Apr 2025 14:05:09 +0000", "14:05:09"),
        ("Request time (epoch ms): 1745503509123", "1745503509123"),
        ("timestamp: 1745503509", "1745503509"),
        ("Sent 4/26/2025, 1:52:03 PM", "1:52:03 PM"),
        ("Current UTC: 2025-04-24 13:52", "2025-04-24 13:52"),
        # "as of", relative days, a clause before the value
        ("As of today, April 24, 2025, the store is open.", "April 24, 2025"),
        ("Yesterday was Wednesday, April 23, 2025.", "April 23, 2025"),
        ("Tomorrow is 2025-04-25.", "2025-04-25"),
        ("Always use today's date, which is April 24, 2025, for relative dates.", "April 24, 2025"),
        ("Gestern war der 23. April 2025.", "23. April 2025"),
        ("昨天是2025年4月23日。", "2025年4月23日"),
    ],
)
def test_dates_and_times_in_each_format_and_language(text, value):
    assert covered(text, value), [(v.kind, v.value) for v in find_volatile(text)]


@pytest.mark.parametrize(
    "label",
    [
        "Now",
        "Today",
        "Current date",
        "Current time",
        "Date",
        "Time",
        "UTC",
        "Local time",
        "Timestamp",
        "Datum",
        "Uhrzeit",
        "Heute",
        "Aktuelle Zeit",
        "Date du jour",
        "Heure locale",
        "Fecha",
        "Hora local",
        "Data de hoje",
        "Hora atual",
        "Data odierna",
        "Ora locale",
        "Huidige tijd",
        "Datum en tijd",
        "Текущая дата",
        "Поточний час",
        "Data i godzina",
        "Tarih",
        "Saat",
        "Dagens datum",
        "当前时间",
        "现在",
        "日期",
        "現在日時",
        "日付",
        "현재 시간",
        "날짜",
    ],
)
def test_label_words_of_twelve_languages_make_a_value_now(label):
    for value in ("2025-04-24 14:05", "2025-04-24", "14:05:09"):
        text = f"You help with travel plans. {label}: {value} and more."
        assert covered(text, value), text


@pytest.mark.parametrize(
    "name",
    [
        "date",
        "time",
        "now",
        "today",
        "timestamp",
        "current_datetime",
        "session_id",
        "conversation_id",
        "request_id",
        "trace_id",
        "tokens_left",
        "tokens_used",
        "token_budget_remaining",
        "remaining_steps",
        "iteration",
        "memory",
        "available_memory",
        "battery_level",
        "location",
        "user_name",
        "user_email",
        "user_city",
        "user_timezone",
        "userName",
        "USER_EMAIL",
        "global_state",
        "agent_state",
        "current_state",
        "git_status",
        "current_branch",
        "turn_count",
        "archival_memory_size",
        "total_cost",
    ],
)
def test_placeholders_with_per_request_names_in_each_syntax(name):
    for slot in (
        f"{{{name}}}",
        f"{{{{{name}}}}}",
        f"{{{{ {name} }}}}",
        f"${{{name}}}",
        f"%({name})s",
        f"<%= {name} %>",
    ):
        text = f"You are the shop assistant. Context line: {slot}. Be brief."
        assert covered(text, slot), text


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Session: 7f3c2a1e-9b4d-4c8e-a1f2-3b5c7d9e0f12", "7f3c2a1e-9b4d-4c8e-a1f2-3b5c7d9e0f12"),
        ("conversation_id=conv_8Kx2Lm9Qp4Rt7Vz1", "conv_8Kx2Lm9Qp4Rt7Vz1"),
        ("Tokens used: 48,213 / 200,000", "48,213"),
        ("Remaining tokens: 151787", "151787"),
        ("Free memory: 3.2 GB", "3.2 GB"),
        ("<budget:token_budget>1000000</budget:token_budget>", "1000000"),
        ("You are on iteration 3 of 10 of your research.", "3"),
        ("The user's name is {name}.", "{name}"),
        ("The user's name is _____, and the user's email address is _____@gmail.com.", "_____@gmail.com"),
        ("- User's timezone: ${timezone}", "${timezone}"),
        ('Current state: {"cart": ["lamp"], "step": 4}', '{"cart": ["lamp"], "step": 4}'),
    ],
)
def test_session_values_under_weak_labels(text, value):
    assert covered(text, value), [(v.kind, v.value) for v in find_volatile(text)]


def test_env_and_git_blocks_are_one_span_each():
    env = "<env>\nWorking directory: /home/ana/shop\nPlatform: linux\nToday's date: 2025-04-24\n</env>"
    git = (
        "gitStatus: This is the git status at the start of the conversation.\nCurrent branch: main\n\n"
        "Status:\nM src/app.py\n?? notes.md\n\nRecent commits:\n3f2a9c1 fix the cart\n"
    )
    for block in (env, git.rstrip("\n")):
        text = f"You are a coding agent.\n\n{block}\n\nFollow the rules below.\n"
        spans = [(v.start, v.end) for v in find_volatile(text) if v.kind == "state"]
        a = text.index(block)
        assert any(s <= a + 1 and a + len(block) - 2 <= e for s, e in spans), (block, spans)


def test_today_words_skipped_only_where_no_today_phrase_can_hold_them():
    from analyzer.detection import phrases

    for text in (
        "Current time: 14:30",
        "current status: 14",
        "It is now 14:30",
        "(now time) 14:30",
        "known 3",
        "CURRENT DATE 2025-05-03",
        "current tİme 14:30",
    ):
        out: list = []
        phrases.today_phrases(text, text.lower(), out)
        found = [m.span() for m in phrases.TODAY.finditer(text) if phrases.TODAY_VALUE.match(text, m.end())]
        assert [(c.start, c.end) for c in out if c.kind == "today-phrase"] == found, text
