"""Credentials a maintenance model copies into USER.md are redacted before it is written
(the file is quoted at the top of every recall block, to the agent's model)."""

from __future__ import annotations

import json
import logging
import time

import pytest
from helpers.llm_stub import say
from test_maintenance import Env, env, replace_answer, stub

from indexer.jobs.secrets import REDACTED, redact_secrets

__all__ = ["env", "stub"]  # (the fixtures, shared with the maintenance tests)

SECRETS = {
    "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz012345": "OPENAI_API_KEY=[redacted]",
    "key sk-ant-api03-abcdefghijklmnopqrstuvwx": "key [redacted]",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY": (
        "aws_secret_access_key = [redacted]"
    ),
    "id AKIAIOSFODNN7EXAMPLE here": "id [redacted] here",
    "secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY (prod)": "secret [redacted] (prod)",
    "password: hunter22": "password: [redacted]",
    '"api_key": "0123456789abcdef"': '"api_key": "[redacted]"',
    "postgres://admin:s3cr3t@db.local/app": "postgres://admin:[redacted]@db.local/app",
    "Authorization: Bearer abcdefghijklmnop1234567890": "Authorization: Bearer [redacted]",
    "密码：abc12345": "密码：[redacted]",
    "пароль: qwerty123": "пароль: [redacted]",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789": "[redacted]",
    "xoxb-1234567890-abcdefghij": "[redacted]",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----": (
        "[redacted]"
    ),
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA (cut)": "[redacted]",
    "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQVYBGRkZGQBDADJ3y5m8kq0i4Kx7B1": "[redacted]",
    "API key: 3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c": "API key: [redacted]",
    "password: hunter2": "password: [redacted]",
    "DB_PASS=Tr0ub4dor": "DB_PASS=[redacted]",
    "Their password is hunter22": "Their password is [redacted]",
    "redis://:s3cret@cache.local:6379": "redis://:[redacted]@cache.local:6379",
    "Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l": "Authorization: Basic [redacted]",
    "glpat-AbCdEfGhIjKlMnOpQrSt": "[redacted]",
    "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh": "[redacted]",
    "AccountKey=AbCdEfGhIjKlMnOpQrStUvWxYz0": "AccountKey=[redacted]",
    "Passwort ist Sup3rS3cret": "Passwort ist [redacted]",
    "密码是 abc12345x": "密码是 [redacted]",
    "MYSQL_PWD=Sup3rS3cret": "MYSQL_PWD=[redacted]",
    "Authorization: Token 0123456789abcdef0123456789abcdef": "Authorization: Token [redacted]",
    "| password | hunter2hunter2 |": "| password | [redacted] |",
    "PGPASSWORD=Sup3rS3cret psql": "PGPASSWORD=[redacted] psql",
    "パスワードは abc12345x": "パスワードは [redacted]",
}
PLAIN = [
    "- Prefers tea.",
    "password: manager",
    "Uses a password manager.",
    "token budget: 1500",
    "The secret: patience",
    "Skips ask-me-anything sessions",
    "https://example.com/a:b@c",
    "Reads sk-learn docs",
    "Token: ERC-20 research",
    "secret: Santa_2024 exchange list",
    "api_key: ${OPENAI_API_KEY} (read from the environment)",
    "token: $GITHUB_TOKEN",
    "api_key=os.environ['OPENAI_API_KEY']",
    "secret_key: settings.SECRET_KEY",
    "access_token: stored-in-keychain",
    "passphrase: diceware-style",
    "pwd: /home/alice/projects",
    "Boarding pass: LH-400 seat 12A",
    "pass = 10-day museum card",
    "パスワード：12文字以上",
    "token: 4096-context window",
    "password is 1Password-managed",
    "passwd: /etc/passwd",
    "sk-learn-compatible-transformers-everywhere",
    "commit 3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a fixed it",
    "docs/Getting-Started/Install/Configuration2024/Linux.md",
]


@pytest.mark.parametrize(("text", "redacted"), SECRETS.items())
def test_credentials_are_redacted(text: str, redacted: str) -> None:
    assert redact_secrets(f"- {text}\n- Likes hiking.\n") == (f"- {redacted}\n- Likes hiking.\n", 1)


@pytest.mark.parametrize("text", PLAIN)
def test_ordinary_words_stay(text: str) -> None:
    assert redact_secrets(text) == (text, 0)


def test_an_aws_secret_after_its_key_id_without_a_name() -> None:
    text = "- AWS: AKIAIOSFODNN7EXAMPLE / je7MtGbClwBF+2Zp9Utk/h3yCo8nvbEXAMPLEKEY\n"
    assert redact_secrets(text) == ("- AWS: [redacted] / [redacted]\n", 2)


def test_a_key_block_cut_short_takes_no_line_after_its_key() -> None:
    text = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1234567890abcdefghij\nName: Alice\n"
    assert redact_secrets(text) == ("[redacted]\nName: Alice\n", 1)


def test_a_models_user_md_is_written_without_the_credentials_it_copied(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    env.event("Set OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz012345 today.")
    key = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"
    content = f"# User profile\n\n- Prefers tea.\n- Their key: OPENAI_API_KEY={key}\n"
    env.stub.run([replace_answer(content)])
    with caplog.at_level(logging.WARNING, logger="indexer.jobs"):
        assert env.run().action == "replace"
    text = (env.vault_dir() / "USER.md").read_text()
    assert key not in text and f"OPENAI_API_KEY={REDACTED}" in text and "Prefers tea" in text
    said = [r.getMessage() for r in caplog.records]
    assert any("1 credential(s)" in line and key not in line for line in said), said


@pytest.mark.parametrize("action", ["none", "replace"])
def test_a_credential_in_the_models_reason_is_redacted_in_the_log_and_state(
    env: Env, caplog: pytest.LogCaptureFixture, action: str
) -> None:
    """The file was redacted, its reason (the log line, maintenance-state.json, what
    `indexer maintain` prints) quoted the key as the model gave it."""
    key = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"
    env.event(f"My key is {key}.")
    answer = {"action": action, "reason": f"noted their key {key}"}
    if action == "replace":
        answer["content"] = "# User profile\n\n- Has an OpenAI account.\n"
    env.stub.run([say(json.dumps(answer))])
    with caplog.at_level(logging.INFO, logger="indexer.jobs"):
        outcome = env.run()
    assert outcome.action == action and outcome.reason == f"noted their key {REDACTED}"
    assert env.task_state().reason == f"noted their key {REDACTED}"
    assert key not in env.ws.maintenance_state.read_text()
    said = [r.getMessage() for r in caplog.records]
    assert any(REDACTED in line for line in said) and not any(key in line for line in said)


@pytest.mark.parametrize(
    "unit",
    [
        "-----BEGIN RSA PRIVATE KEY----- ",
        "-----BEGIN X PRIVATE KEY-----\nAAAAAAAAAAAAAAAAAAAA- ",
        "eyJ-",  # (each eyJ a new start, read to the end: 256 KiB took 17 s)
        "sk-",
        "SG.",
    ],
)
def test_what_never_ends_a_credential_takes_linear_time(unit: str) -> None:
    """A start repeated and never ended was read to the text's end from each: 20,000
    key block starts took a minute."""
    started = time.thread_time()
    redact_secrets(unit * 65_536)
    assert time.thread_time() - started < 2
