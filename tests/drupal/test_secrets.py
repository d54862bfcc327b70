"""The secrets the process holds, and the one redaction every text leaving it passes (SPEC 6,
"Secrets never leave"): each form a password takes in a message, a log, JSON or HTML is taken
out; what messages show by design (the user, the database) and a few letters are not secrets."""

from __future__ import annotations

import html
import io
import json
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_eval_lsp.drupal import secrets
from ai_eval_lsp.drupal.secrets import RedactingStream, Secrets, forms_of, redact, redact_json
from ai_eval_lsp.drupal.site_address import SiteAddress, parse_url

PASSWORD = "pä ss/w@rd\"'\\😀"


def test_a_password_is_held_as_an_address_is_made_and_taken_out_in_every_form() -> None:
    SiteAddress("mysql", "shop", "127.0.0.1", 3306, "reader", PASSWORD)
    forms = [
        PASSWORD,
        quote(PASSWORD, safe=""),
        quote(PASSWORD, safe="").lower(),
        quote(PASSWORD),
        json.dumps(PASSWORD)[1:-1],
        json.dumps(PASSWORD, ensure_ascii=False)[1:-1],
        repr(PASSWORD)[1:-1],
        repr(PASSWORD.encode())[2:-1],  # a driver's bytes, in its error
        html.escape(PASSWORD),
    ]
    for form in forms:
        assert redact(f"connecting with {form} failed") == "connecting with *** failed", form


def test_a_password_in_a_url_is_held_even_when_the_url_cannot_be_read() -> None:
    with pytest.raises(ValueError):
        parse_url("mysql://reader:Kx7%25Secret@[::1/shop", Path("/srv"))
    assert redact("Kx7%25Secret Kx7%Secret") == "*** ***"


@settings(max_examples=300, deadline=None)
@given(
    held=st.lists(st.text(min_size=4, max_size=24), min_size=1, max_size=3),
    around=st.text(max_size=40),
)
def test_every_form_of_every_secret_held_is_found_and_taken_out(held: list[str], around: str) -> None:
    """A text is first looked at for a part each form shares (one scan, not one a form): no
    form, of a password of letters, of punctuation or of any Unicode, may be missed by it."""
    kept = Secrets()
    for secret in held:
        kept.hold(secret)
    for form in set().union(*map(forms_of, held)):
        text = f"{around}{form}{around}"
        assert kept.found_in(text), form
        assert form not in kept.redact(text), form


@pytest.mark.parametrize(
    ("user", "password"),
    [("db", "db"), ("drupal10", "drupal10"), ("reader", "shop"), ("reader", "abc")],
)
def test_what_messages_show_anyway_and_a_few_letters_are_no_secret(user: str, password: str) -> None:
    SiteAddress("mysql", "shop", "127.0.0.1", 3306, user, password)
    text = f"mysql database `shop` on 127.0.0.1:3306 as `{user}`: abc"
    assert redact(text) == text


def test_json_keeps_its_keys_and_structure_and_loses_the_secret_in_its_values() -> None:
    secrets.hold("message")  # as long a word as the keys around it
    text = json.dumps({"message": "the message: message", "messages": ["message"], "id": 1})
    redacted = redact_json(text)
    assert json.loads(redacted) == {"message": "the ***: ***", "messages": ["***"], "id": 1}


def test_a_stream_redacts_a_secret_printed_in_pieces_and_what_is_flushed() -> None:
    secrets.hold("Kx7-Secret")
    written = io.StringIO()
    stream = RedactingStream(written)
    print("the password is Kx7", end="", file=stream)
    print("-Secret, and", file=stream)
    print("Kx7-Secret", end="", file=stream)
    assert written.getvalue() == "the password is ***, and\n"
    stream.flush()
    assert written.getvalue() == "the password is ***, and\n***"
