"""A scripted OpenAI-compatible chat server on 127.0.0.1 for ``kgforge synth``'s tests and benchmark: a stand-in
for a model that drafts from the triples in the prompt, and errs on purpose.

It reads what kgforge's bundled (zh) synth prompts show — the knowledge as a JSON list of ``[head, relation,
tail]`` triples, the speakers, the topics or the goal sequence — and answers a draft with a dialogue in the
style's shape whose knowledge turns say ``{head}的{relation}是{tail}。``. In ``plant`` of the knowledge turns it
plants a wrong value (a digit of the value shifted; else the tail swapped for another triple's), recording each
planted sentence; asked to repair a turn, it rewrites it correctly with probability ``fix``, else plants again.
Every decision is drawn from the hash of the request, so the same request always gets the same reply. It can
answer the first reply to each request badly (``bad``: not JSON, wrong shape, empty, huge, wrong language), answer
429 with Retry-After first (``rate_limited``), and wait ``latency`` seconds per request.

    python benchmarks/scripted_llm.py --style duconv --latency 0.2      # prints its URL, serves until killed
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ROLES = {"duconv": ("leader", "follower"), "kdconv": ("A", "B"), "durecdial": ("recommender", "seeker")}
BAD_KINDS = ("not JSON", "wrong shape", "empty", "huge", "wrong language")
_REPAIR = re.compile(r"第 (\d+) 轮（(.*?)）「(.*)」没有通过知识核对", re.DOTALL)
_STEP = re.compile(r"\[(\d+)\]([^(\-\[]+?)(?:\(『(.*?)』\))?(?=-->|$)")
_CJK_SPACE = re.compile(r"(?<=[\u3400-\u9fff]) +(?=[\u3400-\u9fff])")
LONG = 40  # a tail this long is not said by the scripted model


def bare(text: str) -> str:
    return _CJK_SPACE.sub("", " ".join(text.split()))


@dataclass
class Script:
    style: str
    plant: float = 0.3
    fix: float = 0.8
    latency: float = 0.0
    bad: str | None = None  # answer the first reply to each draft or repair with this kind of bad reply
    always_bad: str | None = None  # answer every reply with this kind of bad reply
    rate_limited: float = 0.0  # share of requests answered 429 (Retry-After) the first time they come
    log: list[dict[str, Any]] = field(default_factory=list)  # one entry per request answered 200
    planted: set[str] = field(default_factory=set)  # every wrong sentence planted (bare)
    limited: int = 0  # 429s answered
    lock: threading.Lock = field(default_factory=threading.Lock)
    _seen: set[str] = field(default_factory=set)

    # ---------------------------------------------------------------- answering

    def answer(self, body: dict[str, Any]) -> tuple[int, str]:
        """The status and the content of the reply to a chat request."""
        messages = body["messages"]
        key = hashlib.sha256(json.dumps(messages, ensure_ascii=False, sort_keys=True).encode()).hexdigest()
        rng = random.Random(key)
        with self.lock:
            first_time = key not in self._seen
            self._seen.add(key)
        limit = rng.random()  # drawn every time: the reply must not depend on whether the request came before
        if first_time and limit < self.rate_limited:
            with self.lock:
                self.limited += 1
            return 429, ""
        asked = [m["content"] for m in messages if m["role"] == "user"]
        retry = asked[-1].startswith("这个回答不能用")
        if self.always_bad or (self.bad and not retry):
            return 200, self.bad_reply(self.always_bad or self.bad or "", asked[0])
        task = next((text for text in reversed(asked) if not text.startswith("这个回答不能用")), asked[0])
        repair = _REPAIR.search(task)
        if repair and task is not asked[0]:
            return 200, json.dumps({"text": self.rewrite(asked[0], repair[3], rng)}, ensure_ascii=False)
        return 200, json.dumps({"turns": self.draft(asked[0], rng)}, ensure_ascii=False)

    def bad_reply(self, kind: str, prompt: str) -> str:
        if kind == "not JSON":
            return "好的，下面是对话：第一轮……"
        if kind == "wrong shape":
            return json.dumps({"dialogue": [{"who": "A", "said": "你好"}]})
        if kind == "empty":
            return ""
        if kind == "huge":
            return json.dumps({"turns": [{"speaker": "A", "text": "很长" * 40_000}]}, ensure_ascii=False)
        opener = self.opener(prompt)
        roles = ROLES[self.style]
        second = roles[1] if opener == roles[0] else roles[0]
        english = [
            {"speaker": opener, "text": "Hello there, how are you doing today?", "goal": 1},
            {"speaker": second, "text": "I am fine, thank you very much for asking.", "goal": 1},
        ]
        return json.dumps({"turns": english})

    # ---------------------------------------------------------------- drafting

    def draft(self, prompt: str, rng: random.Random) -> list[dict[str, Any]]:
        triples = knowledge(prompt)
        said = [t for t in triples if t[1] != "领域" and len(t[2]) < LONG]
        pairs = self.pairs(prompt, said)
        opener = self.opener(prompt)
        roles = ROLES[self.style]
        second = roles[1] if opener == roles[0] else roles[0]
        turns: list[dict[str, Any]] = []
        for first_text, second_text, goal in pairs:
            for speaker, text in ((opener, first_text), (second, second_text)):
                if isinstance(text, tuple):  # a triple to state
                    text = self.sentence(text, triples, rng)
                turns.append({"speaker": speaker, "text": text} | ({"goal": goal} if goal else {}))
        return turns

    def pairs(self, prompt: str, said: list[list[str]]) -> list[tuple[Any, Any, int | None]]:
        """(what the opener says, what the other says, goal) per exchange; a triple where a fact is stated."""
        of = lambda topic: [t for t in said if t[0] == topic]  # noqa: E731
        if self.style == "durecdial":
            return self.sequence_pairs(prompt, of)
        topics = topics_of(prompt, self.style)
        out: list[tuple[Any, Any, int | None]] = []
        for i, topic in enumerate(topics):
            out.append((f"你知道{topic}吗？" if i == 0 else f"聊聊{topic}吧。", "知道一些。", None))
            for triple in of(topic)[:2]:
                if self.style == "duconv":
                    out.append((tuple(triple), "原来如此。", None))
                else:
                    out.append((f"{topic}的{triple[1]}是什么？", tuple(triple), None))
        return [*out, ("今天就聊到这里吧。", "好的，再见！", None)]

    def sequence_pairs(self, prompt: str, of: Any) -> list[tuple[Any, Any, int | None]]:
        bot_first = self.opener(prompt) == ROLES["durecdial"][0]
        out: list[tuple[Any, Any, int | None]] = []
        for k, kind, topic in steps_of(prompt):
            if not topic:
                out.append(("好的。" if bot_first else "嗯。", "再见！" if kind.strip() == "再见" else "好的。", k))
                continue
            out.append((f"聊聊{topic}吧。", f"好的，说说{topic}。", k))
            for triple in of(topic)[:1]:
                out.append(
                    (tuple(triple), "嗯。", k) if bot_first else (f"{topic}的{triple[1]}是什么？", tuple(triple), k)
                )
        return out

    def opener(self, prompt: str) -> str:
        found = re.search(r'"speaker": "([^"]+)"', prompt)
        return found[1] if found else ROLES[self.style][0]

    def sentence(self, triple: tuple[str, ...], triples: list[list[str]], rng: random.Random, plant: float = -1) -> str:
        """The sentence stating ``triple``, or (with probability ``plant``, default the script's) a wrong value."""
        head, relation, tail = (bare(part) for part in triple)
        if rng.random() < (self.plant if plant < 0 else plant):
            wrong = wrong_value(head, relation, tail, triples, rng)
            if wrong is not None:
                text = f"{head}的{relation}是{wrong}。"
                with self.lock:
                    self.planted.add(text)
                return text
        return f"{head}的{relation}是{tail}。"

    def rewrite(self, prompt: str, text: str, rng: random.Random) -> str:
        """The turn ``text`` rewritten: the fact it was about stated right (``fix``), else wrong again."""
        said = bare(text)
        triples = knowledge(prompt)
        about = [t for t in triples if bare(t[0]) in said and bare(t[1]) in said and t[1] != "领域"]
        if not about:
            return "好的。"
        triple = max(about, key=lambda t: len(bare(t[0]) + bare(t[1])))
        return self.sentence(tuple(triple), triples, rng, plant=1 - self.fix)


def wrong_value(head: str, relation: str, tail: str, triples: list[list[str]], rng: random.Random) -> str | None:
    """A wrong tail: the last digit of the value shifted by one; else another triple's tail (of the same relation
    when one is there), never one the head holds for the relation."""
    digits = [m.start() for m in re.finditer(r"\d", tail)]
    if digits:
        at = digits[-1]
        return tail[:at] + str((int(tail[at]) + 1) % 10) + tail[at + 1 :]
    held = {bare(t[2]) for t in triples if bare(t[0]) == head and bare(t[1]) == relation}
    others = [bare(t[2]) for t in triples if bare(t[2]) not in held and len(t[2]) < LONG and t[1] != "领域"]
    same = [bare(t[2]) for t in triples if bare(t[1]) == relation and bare(t[2]) not in held]
    pool = same or others
    return rng.choice(pool) if pool else None


def knowledge(prompt: str) -> list[list[str]]:
    for line in prompt.splitlines():
        if line.startswith("[["):
            return json.loads(line)
    return []


def topics_of(prompt: str, style: str) -> list[str]:
    if style == "duconv":
        return re.findall(r"「(.*?)」", prompt)[:2]
    found = re.search(r"依次聊：(.*?)。", prompt)
    return [t.strip() for t in found[1].split("→")] if found else []


def steps_of(prompt: str) -> list[tuple[int, str, str | None]]:
    found = re.search(r"一步一步完成：(.*)", prompt)
    goal = found[1].strip() if found else ""
    return [(int(k), kind, topic) for k, kind, topic in _STEP.findall(goal)]


# ---------------------------------------------------------------- the server


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # --concurrency 16 and more connect at once

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client killed mid-request (the kill tests) resets its connection: nothing to report


class ScriptedServer:
    def __init__(self, script: Script, port: int = 0) -> None:
        self.script = script
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out as two writes: no 40 ms wait for an ACK between

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                received = time.monotonic()
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if owner.script.latency:
                    time.sleep(owner.script.latency)
                status, content = owner.script.answer(body)
                if status == 429:
                    self.send_response(429)
                    self.send_header("Retry-After", "0.05")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                chars = sum(len(m["content"]) for m in body["messages"])
                payload = json.dumps(
                    {
                        "id": "scripted",
                        "object": "chat.completion",
                        "model": body.get("model"),
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
                        "usage": {"prompt_tokens": chars // 2, "completion_tokens": len(content) // 2},
                    },
                    ensure_ascii=False,
                ).encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                try:
                    self.wfile.write(payload)
                    self.wfile.flush()
                except OSError:
                    return  # the client went away (killed): not answered
                key = hashlib.sha256(json.dumps(body, ensure_ascii=False, sort_keys=True).encode()).hexdigest()
                with owner.script.lock:
                    owner.script.log.append(
                        {"key": key, "received": received, "answered": time.monotonic(), "chars": chars}
                    )

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = _Server(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


@contextmanager
def serving(httpd: ThreadingHTTPServer) -> Iterator[None]:
    """``httpd`` answering on a thread of this process while the block runs, then shut and closed."""
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@contextmanager
def scripted_server(script: Script) -> Iterator[ScriptedServer]:
    server = ScriptedServer(script)
    with serving(server.httpd):
        yield server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--style", choices=sorted(ROLES), required=True)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--plant", type=float, default=0.3)
    parser.add_argument("--fix", type=float, default=0.8)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = ScriptedServer(Script(args.style, args.plant, args.fix, args.latency), args.port)
    print(server.url, flush=True)
    server.httpd.serve_forever()


if __name__ == "__main__":
    main()
