"""``Logins``: one-time codes and sessions, with an injected clock (no sleeping)."""

from __future__ import annotations

from indexer.web.auth import CODE_SECONDS, MAX_SESSIONS, SESSION_SECONDS, Logins


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_code_works_once_and_only_for_a_minute() -> None:
    clock = Clock()
    logins = Logins("tok", clock=clock)
    code = logins.mint_code()
    session = logins.redeem(code)
    assert session and logins.session_ok(session)
    assert logins.redeem(code) is None
    late = logins.mint_code()
    clock.now += CODE_SECONDS + 1
    assert logins.redeem(late) is None


def test_sessions_expire_and_are_capped() -> None:
    clock = Clock()
    logins = Logins("tok", clock=clock)
    sessions = [logins.redeem(logins.mint_code()) for _ in range(MAX_SESSIONS + 1)]
    assert not logins.session_ok(sessions[0])  # the oldest made room
    assert all(logins.session_ok(s) for s in sessions[1:])
    clock.now += SESSION_SECONDS + 1
    assert not logins.session_ok(sessions[-1])
    assert not logins.session_ok("") and not logins.session_ok(None)


def test_bearer_needs_the_exact_token() -> None:
    logins = Logins("tok")
    assert logins.bearer_ok("Bearer tok")
    # the scheme in any case, as /mcp takes it (RFC 9110): the API refused "bearer"
    assert logins.bearer_ok("bearer tok") and logins.bearer_ok("BEARER tok")
    for header in (
        None,
        "",
        "Bearer",
        "Bearer to",
        "Bearer tok2",
        "Basic tok",
        "Bearertok",
        "tok",
        "Bearer \udcff",
        "Bearer  tok",  # two spaces: /mcp refuses it, and so does the API
        "Bearer\ttok",
    ):
        assert not logins.bearer_ok(header)
    assert not Logins(None).bearer_ok("Bearer tok")
