"""analyzer.detection.names and .vocab: slots filled per request by their name, content slots not."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile
from analyzer.detection.names import call_verdict, is_setting, judge_expression, name_verdict


@pytest.mark.parametrize(
    "slot",
    [
        "{tokens_left}",
        "{{global_state}}",
        "${freeMem}",
        "{available_memory}",
        "{git_status}",
        "{{ currentTimezone }}",
        "{DATUM}",
    ],
)
def test_slots_rendered_per_request_are_found(slot):
    assert [v.value for v in find_volatile(f"Context: {slot}.")] == [slot]


@pytest.mark.parametrize(
    "slot",
    ["{input}", "{question}", "{context}", "{{model}}", "{state}", "{token_budget}", "{currentContent}"],
)
def test_content_slots_and_settings_are_not(slot):
    assert find_volatile(f"Use this: {slot}.") == []


def test_a_setting_is_never_flagged_by_its_label():
    assert is_setting("timeZone") and not is_setting("now")
    assert [
        v.value for v in find_volatile("Current time: {now} ({timeZone})") if v.kind == "placeholder"
    ] == ["{now}"]
    assert find_volatile("Current model: {{model}}") == []
    assert name_verdict("latitude") is not None


def test_an_unnamed_slot_after_a_date_phrase_and_a_strftime_format():
    assert [v.value for v in find_volatile("The current date is {}.") if v.kind == "placeholder"] == ["{}"]
    assert [v.value for v in find_volatile("当前日期: %Y-%m-%d")] == ["%Y-%m-%d"]
    assert find_volatile("Write dates in the format %Y-%m-%d.") == []


@pytest.mark.parametrize(
    "expr, why",
    [
        ("requestHints.city", "where the request comes from"),
        ("visitor_country", "where the request comes from"),
        ("ctx.get('user_id', 'unknown')", "the current user's own value"),
        ('msg["person_id"]', "a person id"),
        ("event.sender_id", "a sender id"),
        ("group_id", "a group id"),
        ("user_profile", "the current user's own value"),
        ("week", "today's date"),
        ("session.state", "per-session state"),  # the session's state stays one; only a content field is not
    ],
)
def test_dotted_names_keys_and_owners_name_a_per_request_value(expr, why):
    v = judge_expression(expr)
    assert v is not None and why in v.reason, (expr, v)


@pytest.mark.parametrize(
    "expr",
    ["article.title", "request.locale", "user.plan", "ctx.get('channel')", "weeks", "doc['source']"]
    + [
        "session.content",
        "state.messages",
        "session.message_text",
    ],  # a session's content field: the request's own
)
def test_a_field_owner_alone_or_a_content_key_is_not_one(expr):
    assert judge_expression(expr) is None, expr


@pytest.mark.parametrize(
    "expr",
    [
        "settings['user_id']",
        'config["user_id"]',
        "defaults.get('user_id')",
        'self.config["auth"]["session_id"]',
        'os.environ.get("USER_ID")',
        "app_settings['user_email']",
    ],
)
def test_a_key_looked_up_in_configuration_is_a_setting(expr):
    assert judge_expression(expr) is None, expr


@pytest.mark.parametrize("expr", ["ctx['user_id']", 'request.session["user_id"]', "state.get('session_id')"])
def test_a_key_looked_up_in_request_data_is_still_one(expr):
    assert judge_expression(expr) is not None, expr


@pytest.mark.parametrize(
    "expr", ["firstName", "first_name", "lastName", "full_name", "fullname", "display_name"]
)
def test_a_persons_own_name_by_its_parts_is_per_user(expr):
    v = judge_expression(expr)
    assert v is not None and "own name" in v.reason, expr


@pytest.mark.parametrize("expr", ["author.first_name", "agent_name", "company_name", "file_name", "name"])
def test_a_records_field_or_anothers_name_is_not(expr):
    assert judge_expression(expr) is None, expr


@pytest.mark.parametrize(
    "slot", ["{steps_left}", "{{attemptsLeft}}", "{member_count}", "{recent_commits}", "{{ user_age }}"]
)
def test_counters_counting_down_and_recent_git_state_are_found(slot):
    assert [v.value for v in find_volatile(f"Status: {slot}.")] == [slot]


@pytest.mark.parametrize(
    "slot", ["{max_steps}", "{{attempts}}", "{commit_message_style}", "{user_count_limit}"]
)
def test_their_settings_and_ambiguous_neighbours_are_not(slot):
    assert find_volatile(f"Status: {slot}.") == []


@pytest.mark.parametrize("expr", ["gitMainBranch", "default_branch", "git_base_branch", "GIT_TRUNK_BRANCH"])
def test_the_repositorys_main_branch_is_a_setting(expr):
    assert judge_expression(expr) is None, expr


@pytest.mark.parametrize("expr", ["git_branch", "currentGitBranch", "gitStatus", "recent_commits"])
def test_what_is_checked_out_is_a_snapshot(expr):
    assert "snapshot of the working copy" in judge_expression(expr).reason, expr


def test_the_character_card_user_is_the_users_name():
    text = "You are {{char}}. Talk with {{user}} as a friend."
    assert [v.value for v in find_volatile(text)] == ["{{user}}"]
    assert find_volatile("User: {user}\nAssistant:") == []  # a completion template's turn: content
    # the pair in single braces (str.format or .replace): {user} is the user's name beside {char}
    assert [v.value for v in find_volatile("{char}知道{user}是人类，{user}是作者。")] == ["{user}", "{user}"]
    assert find_volatile("Reply to {user} politely.") == []  # no {char}: a bare {user} tells nothing


def test_a_cjk_labels_now_word_counts_only_at_its_end():
    # a clause of CJK has no spaces: "目前" far before the slot is no label of it, "当前时间：" right before is
    assert find_volatile("但目前来看可能只有修复完成这个故事才能找到关于{char}真实身份的线索。") == []
    assert [v.value for v in find_volatile("在作者到来之前。当前时间：{t}")] == ["{t}"]


def test_a_records_date_field_and_text_about_a_value_are_not_todays():
    assert judge_expression("track.Year") is None and judge_expression("event.date") is None
    assert judge_expression("self.date") is not None and judge_expression("ctx.today") is not None
    assert name_verdict("resolveRelativeTimeInstruction") is None and name_verdict("dateGuidance") is None
    assert name_verdict("get_date_prompt") is not None  # a call rendering the date's block


def test_the_sender_of_the_message_answered_is_per_user():
    for expr in ("message.author", "ctx.author", "update.message.from_user"):
        assert "sent this message" in judge_expression(expr).reason
    assert judge_expression("book.author") is None and judge_expression("message.content") is None


@pytest.mark.parametrize(
    "slot", ["{{ calendar }}", "{todos}", "{reminders}", "{recent_chats}", "{{recentConversations}}"]
)
def test_the_users_agenda_and_recent_activity_are_per_session(slot):
    assert [v.value for v in find_volatile(f"Here is what you know:\n{slot}\n")] == [slot]


@pytest.mark.parametrize("slot", ["{recent_changes_policy}", "{calendar_format}", "{todo_instructions}"])
def test_neighbours_that_are_settings_or_text_are_not(slot):
    assert find_volatile(f"Here is what you know:\n{slot}\n") == []


def test_the_personas_own_name_is_configuration():
    assert judge_expression("character[platforms][wechat][nickname]") is None
    assert judge_expression("bot.nickname") is None
    assert judge_expression("character[user_info][nickname]") is not None  # the user's, kept by the persona
    assert judge_expression("bot.now") is not None


def test_a_name_joined_of_its_parts_and_the_zone_of_now():
    assert name_verdict("first_and_last_name") is not None and name_verdict("file_name") is None
    assert judge_expression("datetime.now().astimezone().tzname()") is None  # the deployment's zone
    assert judge_expression("datetime.now().astimezone().isoformat()") is not None


@pytest.mark.parametrize(
    "expr", ["guildName", "message.guild.name", "ctx.channel.topic", "chat_title", "current_room_name"]
)
def test_where_a_chat_apps_conversation_is_held_is_per_session(expr):
    assert "where this conversation is held" in judge_expression(expr).reason


@pytest.mark.parametrize("expr", ["youtube_channel_name", "server_name", "room", "channel"])
def test_a_channel_of_the_deployment_or_a_bare_place_word_is_not(expr):
    assert judge_expression(expr) is None


def test_a_field_of_the_sender_is_theirs():
    assert "sent this message" in judge_expression("message.author.id").reason
    assert judge_expression("book.author.name") is None


def test_the_zone_cancels_only_its_own_chain():
    both = 'datetime.now().strftime("%H:%M") + " " + now.astimezone().tzname()'
    assert judge_expression(both) is not None  # the clock is read besides the zone
    assert judge_expression("now.tzname()") is None
    from analyzer.detection.names import judge

    whole = [
        ("now.astimezone.tzname", 0),
        ("datetime.now.strftime", 1),
        ("now.astimezone", 0),
        ("datetime.now", 0),
    ]
    assert judge([], whole) is not None  # a reader giving each chain whole (Python's ast)
    assert (
        judge(
            [], [("datetime.now.astimezone.tzname", 0), ("datetime.now.astimezone", 0), ("datetime.now", 0)]
        )
        is None
    )


def test_the_sender_is_found_whatever_the_case_of_its_field():
    for expr in ("message.Author", "msg.Sender.ID", "Message.Author.Name"):
        assert "sent this message" in judge_expression(expr).reason


def test_a_getter_of_now_reads_the_clock():
    from analyzer.detection.names import call_verdict

    assert call_verdict("get_jst_now", 0) is not None and call_verdict("getNow", 0) is not None
    assert call_verdict("show_now", 0) is None and call_verdict("know", 0) is None


def test_a_topic_a_capacity_and_the_chat_history_are_not_readings():
    assert name_verdict("time_management_tips") is None and name_verdict("TIME_MANAGEMENT") is None
    assert name_verdict("battery_capacity_kwh") is None and name_verdict("battery_level") is not None
    assert name_verdict("recent_messages") is None  # the chat history: content, like {chat_history}
    assert name_verdict("recent_chats") is not None  # the user's other conversations: their activity


def test_a_zone_chain_leaves_other_clock_reads_alone():
    from analyzer.detection.names import judge

    both = [("datetime.now.strftime", 1), ("datetime.now.astimezone.tzname", 0), ("datetime.now", 0)]
    both += [("datetime.now.astimezone", 0), ("datetime.now", 0)]  # Python's ast: two reads of now
    assert judge([], both) is not None
    assert judge_expression("uuid4() ~ now().tzname()") is not None
    assert judge_expression("now().strftime('%H:%M') ~ ' ' ~ now().tzname()") is not None


@pytest.mark.parametrize(
    "slot", ["{user_info}", "{{ user_information }}", "{{user_description}}", "{USER_BIO}", "{{ userAlias }}"]
)
def test_a_block_about_the_user_is_filled_per_user(slot):
    assert [v.value for v in find_volatile(f"Context:\n{slot}\n")] == [slot]


@pytest.mark.parametrize(
    "slot, found",
    [("{chatname}", True), ("{membercount}", True), ("{userfullname}", True), ("{nick_name}", True)],
)
def test_names_written_as_one_word_are_read_as_their_parts(slot, found):
    assert bool(find_volatile(f"- Info: {slot}\n")) is found


@pytest.mark.parametrize("slot", ["{chatter}", "{chatbot_rules}", "{system_info}", "{background}"])
def test_one_word_names_that_are_not_such_compounds_are_not(slot):
    assert find_volatile(f"- Info: {slot}\n") == []


@pytest.mark.parametrize(
    "slot", ["{bot_username}", "{{ bot.username }}", "{character[username]}", "{{char.userid}}"]
)
def test_a_personas_own_username_stays_configuration_when_split(slot):
    assert find_volatile(f"You are {slot}, a helpful bot.") == []


@pytest.mark.parametrize(
    "slot, found", [("{season_ja}", True), ("{current_season}", True), ("{season_hint}", False)]
)
def test_the_season_a_request_falls_in_is_a_date(slot, found):
    assert bool(find_volatile(f"Scene: {slot}\n")) is found


@pytest.mark.parametrize(
    "expr, found",
    [
        ("self.environment_info", True),
        ("env.details", True),
        ("getEnvironmentInfo", True),
        ("runtimeContext.workspace.name", False),  # the workspace's own name: where the deployment works
        ("runtimeContext.workspace.id.value", False),
    ],
)
def test_an_environment_block_by_its_own_name_not_a_field_of_a_context(expr, found):
    assert (judge_expression(expr) is not None) is found


def test_a_messaging_apis_sender_fields_are_the_users_own():
    for expr in ("$('Webhook').item.json.body.data.pushName || 'Cliente'", "msg.remoteJid", "senderName"):
        assert "user's own" in judge_expression(expr).reason, expr
    assert judge_expression("push_notification") is None and judge_expression("$json.body.text") is None


def test_a_games_or_companions_state_is_per_session():
    for expr in ("equipped", "player_hp", "current_affinity", "npcs_present", "playerState.stamina"):
        assert "state" in judge_expression(expr).reason, expr
    for expr in ("track.Mood", "health_check_url", "level"):  # words of other domains too
        assert judge_expression(expr) is None, expr


@pytest.mark.parametrize(
    "name", ["memory_dir", "MEMORY_PATH", "vector_db_memory_snippets", "relevant_memories"]
)
def test_where_memory_is_kept_or_memories_found_for_the_query_are_no_memory_block(name):
    assert name_verdict(name) is None, name


@pytest.mark.parametrize("name", ["memory", "user_memory", "memory_block", "core_memories", "agent.memory"])
def test_a_memory_block_by_its_name(name):
    v = name_verdict(name)
    assert v is not None and "memory block" in v.reason, (name, v)


@pytest.mark.parametrize("expr", ["perfil['nome']", "kunde.name", "usuario.email", "pengguna['alamat']"])
def test_a_field_of_the_person_served_in_other_languages(expr):
    v = judge_expression(expr)
    assert v is not None and "per user" in v.reason, (expr, v)


@pytest.mark.parametrize("expr", ["tenant.company_info", "tenant['price_list']"])
def test_a_tenant_is_a_company_not_the_person_served(expr):
    assert judge_expression(expr) is None, expr


@pytest.mark.parametrize("name", ["diaSemana", "hora_agora", "tanggal_hari_ini", "waktu_sekarang"])
def test_portuguese_spanish_and_indonesian_names_of_now(name):
    assert name_verdict(name) is not None, name


def test_a_message_example_and_a_records_day_are_not():
    assert name_verdict("mes_example") is None  # SillyTavern's message examples, not a month
    assert judge_expression("dados.dia") is None  # a record's own day


@pytest.mark.parametrize(
    "name",
    [
        "default_reminder_time",
        "utc_offset",
        "reservation.time",
        "msg.timestamp_iso",
        "start_time",
        "deadline_time",
    ],
)
def test_a_default_an_offset_a_records_time_and_an_events_moment_are_no_clock_reading(name):
    assert name_verdict(name) is None, name


@pytest.mark.parametrize("name", ["current_time", "now.hour", "ctx.time", "time_now", "request_timestamp"])
def test_the_present_moment_still_is(name):
    v = name_verdict(name)
    assert v is not None and "clock" in v.reason, (name, v)


@pytest.mark.parametrize("name", ["today_start", "tomorrow_end", "today_end_time"])
def test_the_start_or_end_of_today_is_todays_moment(name):
    assert name_verdict(name) is not None, name


@pytest.mark.parametrize("name", ["inventory", "player_inventory", "hunger"])
def test_a_players_inventory_and_needs_are_game_state(name):
    v = name_verdict(name)
    assert v is not None and "state" in v.reason, (name, v)


@pytest.mark.parametrize(
    "expr", ["hospitalInfo.location", "restaurant.location", "company.address", "clinic.phone"]
)
def test_a_field_of_the_business_the_deployment_serves_for_is_configuration(expr):
    assert judge_expression(expr) is None, expr


def test_the_users_own_location_still_is_per_user():
    assert judge_expression("user.location") is not None and judge_expression("customer.phone") is not None


@pytest.mark.parametrize("expr", ["now.text", "today.message", "current_time.text"])
def test_the_text_of_a_moment_is_still_the_moment(expr):
    assert judge_expression(expr) is not None, expr


@pytest.mark.parametrize(
    "expr", ["include_all_day", "show_date", "use_24h_time", "config.settings.timezone_name"]
)
def test_a_flag_or_a_configuration_field_is_a_setting(expr):
    assert judge_expression(expr) is None, expr


def test_a_calls_options_still_carry_per_request_values():
    assert judge_expression("opts.telegramChatId") is not None


@pytest.mark.parametrize(
    "call", ["get_current_datetime_with_timezone", "getCurrentTime", "getCurrentDateString"]
)
def test_a_call_named_for_the_current_moment_reads_the_clock(call):
    assert call_verdict(call) is not None, call


@pytest.mark.parametrize("call", ["get_current_user", "current_start_time", "fetch_current_weather"])
def test_a_call_for_the_current_user_an_events_start_or_the_weather_does_not(call):
    assert call_verdict(call) is None, call


@pytest.mark.parametrize(
    "expr", ["session.extra.company_contact", "session.extra.assistant_tone", "ctx.bot_name"]
)
def test_a_field_named_for_the_business_or_the_persona_is_configuration(expr):
    assert judge_expression(expr) is None, expr


@pytest.mark.parametrize("expr", ["child.name", "childName", "cand_info.candidate_name", "mahasiswa.nim"])
def test_the_child_student_or_candidate_a_tutor_or_recruiter_serves(expr):
    v = judge_expression(expr)
    assert v is not None and ("per user" in v.reason or "person served" in v.reason), (expr, v)


@pytest.mark.parametrize(
    "expr",
    ["settings.current_date", "config.today", "app_config.session_id", "ctx.bot_started_at", "now.text"],
)
def test_a_live_value_stays_live_whoever_owns_it(expr):
    assert judge_expression(expr) is not None, expr


@pytest.mark.parametrize("expr", ["child.title", "child.node_id", "candidate.score", "candidate.response"])
def test_a_trees_child_or_a_ranked_candidate_is_no_person(expr):
    assert judge_expression(expr) is None, expr


@pytest.mark.parametrize(
    "call", ["get_current_date_format", "current_time_zone", "setCurrentTime", "update_current_time"]
)
def test_a_call_that_sets_parses_or_formats_the_current_time_reads_no_clock(call):
    assert call_verdict(call) is None, call
