"""Label words in other languages than English that :func:`.context.word_classes` reads by pattern.

:func:`users_own` tells a label naming the current user's own field ("Nome do usuário", "用户名",
"Name des Benutzers"); :func:`event` a label naming another moment's date or time ("Hora de salida",
"Heure de départ", "会议时间"), from a list of events: "Hora de Brasília" and "北京时间" stay the present.

It does NOT split words or read English labels (:mod:`.context` does).
"""

from __future__ import annotations

import re

#: the same owners and parts in other languages (a label's lowered text); the ASCII owners first
_OWNER_ASCII = ("usuari", "utilisat", "nutzer", "utente")
_OWNER_RX = re.compile(
    r"usuári[oa]|usuari[oa]|utilisat(?:eur|rice)|benutzer|nutzer|utente|użytkownik|пользовател|用户|使用者|ユーザー|사용자"
)
_PART_RX = re.compile(
    r"\bnome|\bnombre|\bnom\b|name|e-?mail|correo|courriel|cidade|ciudad|\bville|\bstadt|città|\bpaís|\bpays"
    r"|fuso hor|zona horaria|fuseau|zeitzone|telefone|teléfono|téléphone|endereço|dirección|adresse|indirizzo"
    r"|имя|почт|город|名|邮箱|城市|位置|时区|メール|이름|이메일"
)


def users_own(low: str) -> bool:
    """A lowered label in another language names the current user's own field."""
    if low.isascii() and not ("usuari" in low or "utilisat" in low or "nutzer" in low or "utente" in low):
        return False  # none of _OWNER_ASCII (spelled out: no generator for each label)
    return bool(_OWNER_RX.search(low) and _PART_RX.search(low))


#: an event's date or time in Romance languages ("Hora de salida", "Heure de départ", "Data di
#: consegna"), in Chinese and Japanese ("会议时间", "出発時刻", "營業時間") and Korean ("영업시간"): the event named from a list, so
#: that "Hora de Brasília", "Heure du serveur" or "北京时间" stay the present
_FOREIGN_EVENT = re.compile(
    r"\b(?:hora|heure|fecha|data|date|horário|horario|orario|ora)\s+(?:de|du|del|della|di|da|do|des|d')\s*(?:la\s+|l')?"
    r"(?:salida|llegada|partida|chegada|départ|arrivée|entrega|livraison|consegna|partenza|arrivo|inicio|início|début"
    r"|fin|fim|cierre|fermeture|chiusura|apertura|ouverture|abertura|cita|rendez-vous|reunión|réunion|riunione|evento"
    r"|événement|publicación|publicação|pubblicazione|vencimiento|vencimento|échéance|scadenza|nacimiento|naissance"
    r"|nascimento|nascita|envío|envio|envoi|invio|pedido|commande|ordine|reserva|réservation|prenotazione|concierto"
    r"|concert|concerto|vuelo|vol|voo|volo|embarque|embarquement|imbarco)\b"
    r"|(?:会议|會議|出发|出發|出発|到达|到達|到着|发布|發布|発売|截止|开始|開始|结束|結束|終了|预约|預約|予約|交付|配送|发货|發貨|航班|出港|入港|演出|開演|开演"
    # opening and working hours ("營業時間", "営業時間", "办公时间", "受付時間"): a schedule, not the clock
    r"|营业|營業|営業|办公|辦公|开放|開放|服务|服務|受付|勤務|上班)"
    r"(?:时间|時間|時刻|日期|日付|日時)|(?:영업|운영|근무|업무)\s*시간"
)


def event(low: str) -> bool:
    """A label in another language names another moment's date or time, and no present word."""
    if low.isascii() and not (
        " de " in low or " di " in low or " da " in low or " du " in low or " do " in low
    ):
        return False  # no Romance "of": no event named in those languages
    return bool(_FOREIGN_EVENT.search(low))
