"""The LLM client's public face (kgforge.llm), against real HTTP servers on 127.0.0.1: typed requests and
responses with the reply's token usage, counts, a cache by request hash that a hit never re-sends (and that
keeps the caches written before the client moved), use from many threads at once, and a hook before sending."""

from __future__ import annotations

import hashlib
import json
import shutil
import ssl
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from kgforge.core.quarantine import Quarantine
from kgforge.llm import ChatRequest, LLMClient, LLMError, Usage
from tests.llm_support import ask, client, reply, server


def completion(content: str, usage: dict | None = None) -> bytes:
    body = {"choices": [{"message": {"role": "assistant", "content": content}}]}
    return json.dumps(body | ({"usage": usage} if usage else {})).encode()


def echo(delay: float = 0.0, usage: dict | None = None):
    """A server answering each prompt with itself reversed, after ``delay`` seconds."""

    def answer(handler, n):
        time.sleep(delay)
        reply(handler, body=completion(handler.prompt[::-1], usage))

    return answer


@pytest.fixture
def echo_server():
    def start(delay: float = 0.0, usage: dict | None = None):
        prompts: list[str] = []
        lock = threading.Lock()

        def answer(handler, n):
            with lock:
                prompts.append(handler.prompt)
            echo(delay, usage)(handler, n)

        return server(answer, keep_body=True), prompts

    return start


def test_a_response_carries_its_usage_and_a_cache_hit_sends_nothing(tmp_path, echo_server):
    served, prompts = echo_server(usage={"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15})
    with served as (url, _):
        llm = client(url, tmp_path)
        request = llm.request([{"role": "user", "content": "hello"}])
        first, second = llm.complete(request), llm.complete(request)
    assert (first.content, first.usage, first.cached) == ("olleh", Usage(12, 3), False)
    assert (second.content, second.usage, second.cached) == ("olleh", Usage(12, 3), True)  # as it was when sent
    assert prompts == ["hello"] and first.key == second.key
    stats = llm.stats()
    assert (stats.calls, stats.cache_hits, stats.prompt_tokens, stats.completion_tokens) == (1, 1, 12, 3)
    assert (tmp_path / "cache" / f"{first.key}.json").is_file()


def test_usage_the_server_does_not_give_is_none(tmp_path, echo_server):
    served, _ = echo_server(usage={"prompt_tokens": "many", "completion_tokens": -1})
    with served as (url, _):
        response = client(url, tmp_path).complete(ChatRequest.of("m", [{"role": "user", "content": "x"}]))
    assert response.usage == Usage(None, None)


def test_the_cache_key_is_the_one_caches_were_written_with(tmp_path):
    messages = [{"role": "system", "content": "答"}, {"role": "user", "content": "q"}]
    old = json.dumps(
        {"endpoint": "http://h/v1/chat/completions", "model": "m", "messages": messages, "temperature": 0.0},
        ensure_ascii=False,
        sort_keys=True,
    )
    key = ChatRequest.of("m", messages).key("http://h/v1/chat/completions")
    assert key == hashlib.sha256(old.encode("utf-8")).hexdigest()


def test_sixteen_threads_send_each_request_once(tmp_path, echo_server):
    served, prompts = echo_server(delay=0.2, usage={"prompt_tokens": 5, "completion_tokens": 2})
    asked = [f"prompt {i % 8}" for i in range(64)]
    with served as (url, _):
        llm = client(url, tmp_path)
        with ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(lambda p: llm.ask([{"role": "user", "content": p}], str.upper, "t"), asked))
    assert answers == [p[::-1].upper() for p in asked]
    assert sorted(prompts) == sorted(set(asked))  # each distinct request sent once, however many asked at once
    stats = llm.stats()
    assert (stats.calls, stats.cache_hits, stats.prompt_tokens, stats.completion_tokens) == (8, 56, 40, 16)


def test_threads_asking_different_requests_wait_for_none_of_the_others(tmp_path, echo_server):
    served, prompts = echo_server(delay=0.5)
    with served as (url, _):
        llm = client(url, tmp_path)
        started = time.monotonic()
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(lambda i: llm.ask([{"role": "user", "content": str(i)}], str, "t"), range(16)))
        took = time.monotonic() - started
    assert len(prompts) == 16 and took < 4  # sixteen at once, not 8 s one after another


def test_a_hook_sees_each_request_before_it_is_sent_and_can_stop_it(tmp_path, echo_server):
    seen: list[ChatRequest] = []

    def dry_run(request: ChatRequest) -> None:
        seen.append(request)
        raise LLMError("dry run: not sent")

    served, prompts = echo_server()
    with served as (url, _):
        llm = LLMClient(url, "m", tmp_path / "cache", Quarantine(tmp_path / "q.jsonl"), before_send=dry_run)
        with pytest.raises(LLMError, match="dry run"):
            ask(llm)
    assert prompts == [] and [m.content for m in seen[0].messages] == ["hello"]


def test_a_reply_that_fails_its_check_is_quarantined_and_not_cached(tmp_path, echo_server):
    from kgforge.llm import BadReply

    def refuse(content: str) -> str:
        raise BadReply("not what was asked")

    served, prompts = echo_server()
    with served as (url, _):
        llm = client(url, tmp_path)
        assert llm.ask([{"role": "user", "content": "x"}], refuse, "test") is None
        assert llm.ask([{"role": "user", "content": "x"}], refuse, "test") is None
        llm.close()
    assert prompts == ["x", "x"] and llm.stats().rejected == 2
    entries = [json.loads(line) for line in (tmp_path / "rejected.jsonl").read_text("utf-8").splitlines()]
    assert entries[0]["reason"] == "malformed LLM reply: not what was asked" and entries[0]["record"] == "x"


def test_an_unreadable_cache_file_is_said_and_asked_again(tmp_path, echo_server):
    served, prompts = echo_server()
    with served as (url, _):
        llm = client(url, tmp_path)
        first = llm.complete(llm.request([{"role": "user", "content": "ab"}]))
        (tmp_path / "cache" / f"{first.key}.json").write_text("{half", encoding="utf-8")
        with pytest.warns(RuntimeWarning, match="cached reply unreadable"):
            again = llm.complete(llm.request([{"role": "user", "content": "ab"}]))
    assert again.content == "ba" and not again.cached and prompts == ["ab", "ab"]


def test_a_key_that_cannot_be_a_header_is_one_error_that_does_not_show_it(tmp_path, monkeypatch, echo_server):
    monkeypatch.setenv("KGFORGE_TEST_KEY", "sk-secret\r\nX-Injected: 1")
    served, prompts = echo_server()
    with served as (url, _):
        llm = LLMClient(url, "m", tmp_path / "c", Quarantine(tmp_path / "q"), key_env="KGFORGE_TEST_KEY")
        with pytest.raises(LLMError, match=r"\$KGFORGE_TEST_KEY: the key holds") as caught:
            ask(llm)
    assert "secret" not in str(caught.value) and prompts == []


def test_a_proxy_from_the_environment_is_used(tmp_path, monkeypatch):
    with server(lambda h, n: reply(h, body=completion("via proxy"))) as (proxy, proxied):
        monkeypatch.setenv("http_proxy", proxy.removesuffix("/v1"))
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        assert ask(client("http://llm.invalid:8000/v1", tmp_path)) == "via proxy"
    assert proxied == ["http://llm.invalid:8000/v1/chat/completions"]  # a plain-HTTP proxy gets the whole address


@pytest.fixture
def certificate(tmp_path):
    """A self-signed certificate for 127.0.0.1 (made by the openssl command) and its key."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    return cert, tls


def test_https_checks_the_certificate(tmp_path, monkeypatch, certificate):
    cert, tls = certificate
    with server(lambda h, n: reply(h, body=completion("over tls")), tls=tls) as (url, asked):
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)
        with pytest.raises(LLMError, match="CERTIFICATE_VERIFY_FAILED") as caught:
            ask(client(url, tmp_path / "untrusted"))
        assert "\n" not in str(caught.value)
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # trusted as a system store would trust it
        assert ask(client(url, tmp_path / "trusted")) == "over tls"
    assert asked == ["/v1/chat/completions"]
