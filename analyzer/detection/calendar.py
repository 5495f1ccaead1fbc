"""Month and weekday names per language and script, as data and as look-ups.

Tables (English, German, French, Spanish, Portuguese, Italian, Dutch, Russian, Ukrainian, Polish,
Turkish, Swedish, Danish/Norwegian, Indonesian, Czech, Finnish, Romanian, Hungarian, Greek, Arabic,
Hebrew, Hindi, Thai months; Chinese, Japanese and Korean weekday forms) give :data:`MONTH_OF` (a lower-case
month name or abbreviation → its number), :data:`WEEKDAY_OF` (a weekday name → (language, form,
0–6)) and :func:`weekday_name` (the same form of another weekday, for renderers).

It does NOT find dates in text (:mod:`.dates` does) nor decide anything.
"""

from __future__ import annotations

_MONTHS = {
    "en": "january february march april may june july august september october november december",
    "de": "januar februar märz april mai juni juli august september oktober november dezember",
    "de-at": "jänner feber märz april mai juni juli august september oktober november dezember",
    "fr": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "es": "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
    "pt": "janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro",
    "it": "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre",
    "nl": "januari februari maart april mei juni juli augustus september oktober november december",
    "ru": "января февраля марта апреля мая июня июля августа сентября октября ноября декабря",
    "ru-nom": "январь февраль март апрель май июнь июль август сентябрь октябрь ноябрь декабрь",
    "uk": "січня лютого березня квітня травня червня липня серпня вересня жовтня листопада грудня",
    "pl": "stycznia lutego marca kwietnia maja czerwca lipca sierpnia września października listopada grudnia",
    "pl-nom": "styczeń luty marzec kwiecień maj czerwiec lipiec sierpień wrzesień październik listopad grudzień",
    "tr": "ocak şubat mart nisan mayıs haziran temmuz ağustos eylül ekim kasım aralık",
    "sv": "januari februari mars april maj juni juli augusti september oktober november december",
    "da": "januar februar marts april maj juni juli august september oktober november december",
    "id": "januari februari maret april mei juni juli agustus september oktober november desember",
    "cs": "ledna února března dubna května června července srpna září října listopadu prosince",
    "fi": "tammikuuta helmikuuta maaliskuuta huhtikuuta toukokuuta kesäkuuta heinäkuuta elokuuta syyskuuta "
    "lokakuuta marraskuuta joulukuuta",
    "ro": "ianuarie februarie martie aprilie mai iunie iulie august septembrie octombrie noiembrie decembrie",
    "hu": "január február március április május június július augusztus szeptember október november december",
    "el": "ιανουαρίου φεβρουαρίου μαρτίου απριλίου μαΐου ιουνίου ιουλίου αυγούστου σεπτεμβρίου οκτωβρίου "
    "νοεμβρίου δεκεμβρίου",
    "ar": "يناير فبراير مارس أبريل مايو يونيو يوليو أغسطس سبتمبر أكتوبر نوفمبر ديسمبر",
    "he": "בינואר בפברואר במרץ באפריל במאי ביוני ביולי באוגוסט בספטמבר באוקטובר בנובמבר בדצמבר",
    "hi": "जनवरी फ़रवरी मार्च अप्रैल मई जून जुलाई अगस्त सितंबर अक्टूबर नवंबर दिसंबर",
    "hi-2": "जनवरी फरवरी मार्च अप्रैल मई जून जुलाई अगस्त सितम्बर अक्तूबर नवम्बर दिसम्बर",
    "th": "มกราคม กุมภาพันธ์ มีนาคม เมษายน พฤษภาคม มิถุนายน กรกฎาคม สิงหาคม กันยายน ตุลาคม พฤศจิกายน ธันวาคม",
}
#: abbreviations read with or without a final period ("Apr.", "févr.", "сент.")
_MONTH_ABBR = {
    "en": "jan feb mar apr may jun jul aug sep oct nov dec",
    "en-4": "jan feb mar apr may june july aug sept oct nov dec",
    "de": "jan feb mär apr mai jun jul aug sep okt nov dez",
    "fr": "janv févr mars avr mai juin juil août sept oct nov déc",
    "es": "ene feb mar abr may jun jul ago sep oct nov dic",
    "pt": "jan fev mar abr mai jun jul ago set out nov dez",
    "it": "gen feb mar apr mag giu lug ago set ott nov dic",
    "nl": "jan feb mrt apr mei jun jul aug sep okt nov dec",
    "ru": "янв февр марта апр мая июня июля авг сент окт нояб дек",
}
#: Monday first; several forms per language, each a full row of seven
_WEEKDAYS = {
    "en": "monday tuesday wednesday thursday friday saturday sunday",
    "en-3": "mon tue wed thu fri sat sun",
    "en-4": "mon tues wed thur fri sat sun",
    "de": "montag dienstag mittwoch donnerstag freitag samstag sonntag",
    "fr": "lundi mardi mercredi jeudi vendredi samedi dimanche",
    "es": "lunes martes miércoles jueves viernes sábado domingo",
    "pt": "segunda-feira terça-feira quarta-feira quinta-feira sexta-feira sábado domingo",
    "pt-short": "segunda terça quarta quinta sexta sábado domingo",
    "it": "lunedì martedì mercoledì giovedì venerdì sabato domenica",
    "nl": "maandag dinsdag woensdag donderdag vrijdag zaterdag zondag",
    "ru": "понедельник вторник среда четверг пятница суббота воскресенье",
    "uk": "понеділок вівторок середа четвер пʼятниця субота неділя",
    "pl": "poniedziałek wtorek środa czwartek piątek sobota niedziela",
    "tr": "pazartesi salı çarşamba perşembe cuma cumartesi pazar",
    "sv": "måndag tisdag onsdag torsdag fredag lördag söndag",
    "da": "mandag tirsdag onsdag torsdag fredag lørdag søndag",
    "id": "senin selasa rabu kamis jumat sabtu minggu",
    "cs": "pondělí úterý středa čtvrtek pátek sobota neděle",
    "fi": "maanantai tiistai keskiviikko torstai perjantai lauantai sunnuntai",
    "ro": "luni marți miercuri joi vineri sâmbătă duminică",
    "hu": "hétfő kedd szerda csütörtök péntek szombat vasárnap",
    "el": "δευτέρα τρίτη τετάρτη πέμπτη παρασκευή σάββατο κυριακή",
    "ar": "الاثنين الثلاثاء الأربعاء الخميس الجمعة السبت الأحد",
    "zh": "星期一 星期二 星期三 星期四 星期五 星期六 星期日",
    "zh-tian": "星期一 星期二 星期三 星期四 星期五 星期六 星期天",
    "zh-zhou": "周一 周二 周三 周四 周五 周六 周日",
    "zh-tw": "週一 週二 週三 週四 週五 週六 週日",
    "ja": "月曜日 火曜日 水曜日 木曜日 金曜日 土曜日 日曜日",
    "ja-short": "月曜 火曜 水曜 木曜 金曜 土曜 日曜",
    "ko": "월요일 화요일 수요일 목요일 금요일 토요일 일요일",
}
#: weekday abbreviations read only with their period and a date after them ("jeu. 24 avr. 2025")
WEEKDAY_ABBR = (
    "lun mar mer jeu ven sam dim lu ma mi ju vi sá sa do mo di fr so mié jue vie sáb dom seg ter qua qui sex "
    "gio sab wo vr za zo pon wt śr czw pt sob niedz пн вт ср чт пт сб вс"
).split()
#: the one-character weekdays of a Japanese date ("2025年4月24日(木)")
JA_DAY = "月火水木金土日"
#: Korean one-syllable weekdays ("(목)")
KO_DAY = "월화수목금토일"
#: Japanese era names and the Gregorian year before each era's first year
ERAS = {"令和": 2018, "平成": 1988, "昭和": 1925}

MONTH_OF: dict[str, int] = {}
for _table in (_MONTHS, _MONTH_ABBR):
    for _row in _table.values():
        for _i, _name in enumerate(_row.split()):
            MONTH_OF.setdefault(_name, _i + 1)
WEEKDAY_OF: dict[str, tuple[str, int]] = {}
for _form, _row in _WEEKDAYS.items():
    for _i, _name in enumerate(_row.split()):
        WEEKDAY_OF.setdefault(_name, (_form, _i))
#: every month and weekday name, longest first (for building alternations)
MONTH_NAMES = sorted(MONTH_OF, key=len, reverse=True)
WEEKDAY_NAMES = sorted((w for w in WEEKDAY_OF if w.isalpha() or "-" in w or "ʼ" in w), key=len, reverse=True)
WEEKDAY_WORDS = frozenset(WEEKDAY_OF)
MONTH_WORDS = frozenset(MONTH_OF)


def weekday_name(name: str, shift: int) -> str:
    """``name`` moved ``shift`` days on, in the same language, form and case ("Thursday", 1 → "Friday")."""
    form, i = WEEKDAY_OF[name.lower()]
    new = _WEEKDAYS[form].split()[(i + shift) % 7]
    if name.isupper() and len(name) > 1:
        return new.upper()
    return new[:1].upper() + new[1:] if name[:1].isupper() else new
