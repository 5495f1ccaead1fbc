"""Label words in languages other than English, sorted into the classes of :mod:`.context`.

:data:`WORDS` (class → ASCII words, read like the English ones: German, French, Spanish,
Portuguese, Italian, Dutch, Polish, Indonesian, Nordic) and :data:`MARKS` (one pattern per class for the words of
other scripts and with accents: Chinese, Japanese, Korean, Russian, Ukrainian, Arabic, Hindi, Vietnamese, Thai, Hebrew, Greek …), so that
"Heute ist", "Nous sommes le", "现在时间：", "오늘은" label a value as now, and "训练数据截止",
"Wissensstand", "mise à jour" as fixed.

It does NOT read text itself: :func:`.context.word_classes` looks labels up here.
"""

from __future__ import annotations

import re

WORDS = {
    "now": "heute heutige heutiges heutigen jetzt aktuell aktuelle aktueller aktuelles aktuellen derzeit momentan "
    "uhrzeit datum zeitpunkt aujourd'hui maintenant actuel actuelle actuellement heure hoy ahora actual "
    "fecha hora hoje agora atual atualmente oggi adesso attuale attualmente odierna odierno vandaag huidige "
    "huidig tijd dzisiaj teraz obecnie utc gmt idag nu dagens klockan tid tarih tarihi saat godzina godz ora "
    "dzisiejsza dzisiejszy aktualna aktualny aktualne sekarang tanggal waktu nyt dato dnes azi acum",
    "static": "stand wissensstand trainingsdaten aktualisiert ver\u00f6ffentlicht gegr\u00fcndet connaissances "
    "actualizado actualizada conocimiento publicado publicada lanzado atualizado atualizada conhecimento "
    "aggiornato aggiornata conoscenze pubblicato bijgewerkt gepubliceerd kennis corte lahir lahirmu lahirnya atendimento funcionamento apertura abertura cierre buka tutup",
    "example": "beispiel beispiele exemple exemples ejemplo ejemplos exemplo exemplos esempio esempi voorbeeld "
    "przyk\u0142ad contoh contohnya misal misalnya seperti kayak",
    "around": "seit bis depuis avant desde hasta antes dopo prima fino sinds",
}
MARKS = {
    "example": r"例如|比如|示例|例子|样例|範例|例えば|举例|^例[:：]|[\s(（]例[:：）)]|예시|예를 들어|например|пример|приклад|如果|假如|假设|もし|만약|라면|だとしたら|とすると|"
    r"если|nếu",
    "static": r"截止|截至|训练|訓練|知识|知識|更新|发布|發布|成立|创立|版本|カットオフ|学習|リリース|公開|改訂|"
    r"기준|학습|지식|출시|업데이트|обучен|знани|обновл|выпущ|опубликов|версия|навчан|оновлен|"
    r"mise à jour|mis à jour|atención|mở cửa|đóng cửa|giờ làm việc|publié|fondé|última actualización|atualização|última atualização|"
    r"veröffentlicht|gegründet|güncelleme|aktualizacj|تحديث|إصدار|अपडेट|जारी",
    "around": r"之前|以前|之后|以后|以後|自从|直到|までに|以降|이전|이후|까지|после|начиная|après|jusqu|después|até",
    "now": r"今天|今日|本日|现在|現在|当前|當前|目前|此刻|时间|時間|日期|日時|日付|时刻|時刻|오늘|현재|지금|날짜|시간|"
    r"시각|일시|сегодня|сейчас|текущ|дата|время|сьогодні|зараз|поточн|\bчас\b|dziś|bieżąc|bugün|şimdi|güncel|"
    r"aujourd’hui|昨天是|明天是|昨日は|明日は|어제는|내일은|вчера было|завтра будет|"
    r"الحالي|الحالية|اليوم|التاريخ|الوقت|الآن|الساعة|आज|वर्तमान|तारीख|तिथि|दिनांक|समय|अभी|"
    r"hôm nay|bây giờ|hiện tại|hiện giờ|horário|horario|thời gian|วันนี้|ตอนนี้|ปัจจุบัน|วันที่|เวลา|היום|עכשיו|תאריך|"
    r"σήμερα|τώρα|ημερομηνία|tänään|päivämäärä|dnešní|aktuální|nyní|astăzi|curentă|mai dátum|jelenlegi|jelenleg",
}
#: after a value: it is supposed ("2024-06-01이라면", "…だとしたら"), not rendered
SUPPOSED_AFTER = re.compile(r"^\s*(?:이라면|라면|이면|だとしたら|とすると|の場合|的话)")
MARK = re.compile("|".join(f"(?P<{cls}>{rx})" for cls, rx in MARKS.items()), re.IGNORECASE)
