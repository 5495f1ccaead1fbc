"""analyzer.detection.owners: fields of the person served are per user; their role, plan and preferences are not."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile
from analyzer.detection.names import judge_expression, words
from analyzer.detection.owners import owned_field, owned_id


@pytest.mark.parametrize(
    "expr",
    ["user.first_name", "user.age", "user.weight", "guest.room", "guest.checkout_on", "request.user.email"],
)
def test_a_field_of_the_person_served_is_per_user(expr):
    v = judge_expression(expr)
    assert v is not None and "per user" in v.reason, expr


@pytest.mark.parametrize(
    "expr",
    ["user.plan", "user.role", "customer.tier", "user.permissions", "user.language", "member.units"],
)
def test_its_role_plan_permissions_and_preferences_are_not(expr):
    assert owned_field(expr, words) is None and judge_expression(expr) is None, expr


def test_content_sizes_records_and_settings_are_not_fields_of_the_person():
    for expr in ("customer.query", "users.length", "author.first_name", "settings.user.name", "user"):
        assert owned_field(expr, words) is None, expr
    assert owned_field("currentUser.email", words) == "currentUser"


def test_an_owner_joined_to_an_id_or_phone_in_one_name():
    assert owned_id(words("system__caller_id")) and owned_id(words("customer_phone"))
    assert not owned_id(words("client_id"))  # an OAuth app's credential
    text = "{{system__caller_id}} is the caller's phone number.\n"
    assert [v.value for v in find_volatile(text)] == ["{{system__caller_id}}"]


def test_a_person_served_and_their_name_or_profile_in_one_name():
    for name in ("customer_name", "player_full_name", "patient_info", "client_profile", "nome_cliente"):
        assert owned_id(words(name)), name
    for name in ("agent_name", "bot_name", "company_name", "customer_service", "customer_type", "name_tag"):
        assert not owned_id(words(name)), name  # the assistant's or the business's own, a setting
    assert [v.value for v in find_volatile("Greet {{customer_name}} by name.\n")] == ["{{customer_name}}"]


@pytest.mark.parametrize("expr", ["user_class_instance.name", "userObj.email", "user_record.city"])
def test_an_owner_named_for_the_object_holding_the_person(expr):
    assert owned_field(expr, words) is not None


def test_a_shells_last_outcome_is_per_request():
    assert judge_expression("lastExitCode") is not None and judge_expression("last_command") is not None
    assert judge_expression("exit_code_meanings") is None


def test_a_key_looked_up_in_the_person_served_is_their_field():
    assert "profile.name" in judge_expression("profile['name']").reason
    assert judge_expression("settings['user_id']") is None and judge_expression("row['name']") is None
