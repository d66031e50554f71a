// The workers' chat page: pairs through POST /api/collect/join, follows the session with long polls of
// GET /api/collect/session/ID, sends turns with the facts clicked for them. Text reaches the page through
// textContent only. The token comes from the link (?token=…), is kept for this tab in sessionStorage and
// taken out of the address bar, so it is not left in the history or shown on screen.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("collect-data").textContent);
  const S = data.strings;
  const KEY = "kgforge-collect-token";
  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(location.search);
  let token = params.get("token") || sessionStorage.getItem(KEY);
  if (params.has("token")) {
    sessionStorage.setItem(KEY, token);
    params.delete("token");
    history.replaceState(null, "", location.pathname + (params.toString() ? "?" + params : ""));
  }
  let view = data.view;
  let sid = view ? view.session : null;
  let shownKnowledge = null;
  const clicked = new Set();

  function say(text) { $("status").textContent = text; }

  async function api(method, path, body) {
    const init = { method, headers: { Authorization: "Bearer " + token } };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const reply = await fetch(path, init);
    const answer = await reply.json().catch(() => ({}));
    if (!reply.ok) {
      const error = new Error(answer.error || String(reply.status));
      error.status = reply.status;
      throw error;
    }
    return answer;
  }

  function fill(list, items, make) {
    list.replaceChildren(...items.map(make));
  }

  function item(text, className) {
    const li = document.createElement("li");
    if (className) li.className = className;
    li.textContent = text;
    return li;
  }

  function factText(f) { return f.head + " — " + f.relation + " — " + f.tail; }

  function renderKnowledge(v) {
    $("knowledge-box").hidden = !v.knowledge;
    if (!v.knowledge || shownKnowledge === v.session) return;
    shownKnowledge = v.session;
    fill($("knowledge"), v.knowledge, (f) => {
      const li = document.createElement("li");
      const button = document.createElement("button");
      button.type = "button";
      button.className = "fact";
      button.dataset.id = f.id;
      button.setAttribute("aria-pressed", "false");
      for (const [cls, text] of [["h", f.head], ["r", f.relation], ["o", f.tail]]) {
        const span = document.createElement("span");
        span.className = cls;
        span.textContent = text;
        button.append(span, " ");
      }
      button.addEventListener("click", () => toggle(button));
      li.append(button);
      return li;
    });
  }

  function toggle(button) {
    const id = button.dataset.id;
    if (clicked.has(id)) clicked.delete(id); else clicked.add(id);
    button.setAttribute("aria-pressed", String(clicked.has(id)));
  }

  function renderSide(v) {
    $("role").textContent = S[v.role] || v.role;
    $("hint").textContent = S["hint_" + v.role] || "";
    $("goal-box").hidden = !v.goal;
    // DuConv's first goal line is ["START", topic A, topic B]: the path of topics, shown without the keyword
    if (v.goal) fill($("goal"), v.goal, (line) => item((line[0] === "START" ? line.slice(1) : line).join(" → ")));
    $("profile-box").hidden = !v.profile;
    if (v.profile) {
      const dl = $("profile");
      dl.replaceChildren();
      for (const [k, value] of Object.entries(v.profile)) {
        const dt = document.createElement("dt");
        const dd = document.createElement("dd");
        dt.textContent = k;
        dd.textContent = Array.isArray(value) ? value.join("、") : String(value);
        dl.append(dt, dd);
      }
    }
    $("situation-box").hidden = v.situation === undefined;
    if (v.situation !== undefined) $("situation").textContent = v.situation;
    const stepBox = $("step-box");
    stepBox.hidden = v.step === undefined || !v.goal;
    if (!stepBox.hidden) {
      const select = $("step");
      const keep = Math.max(v.step, Number(select.value) || 0);
      select.replaceChildren();
      v.goal.forEach((line, i) => {
        if (i + 1 < v.step) return;
        const option = document.createElement("option");
        option.value = String(i + 1);
        option.textContent = line.join(" ");
        option.selected = i + 1 === keep;
        select.append(option);
      });
    }
    renderKnowledge(v);
  }

  function renderTurns(v) {
    fill($("turns"), v.turns, (turn) => {
      const li = document.createElement("li");
      li.className = "turn " + (turn.role === v.role ? "mine" : "theirs");
      const who = document.createElement("span");
      who.className = "who";
      who.textContent = S[turn.role] || turn.role;
      const text = document.createElement("span");
      text.className = "text";
      text.textContent = turn.text;
      if (turn.facts && turn.facts.length) {
        const used = document.createElement("span");
        used.className = "facts-used";
        used.textContent = S.clicked + ": " + turn.facts.map(factText).join("; ");
        text.append(used);
      }
      li.append(who, text);
      return li;
    });
  }

  function warningText(code, v) {
    const [kind, id] = code.split(":");
    const fact = (v.knowledge || []).find((f) => f.id === id);
    return (S[kind] || code).replace("{fact}", fact ? factText(fact) : id || "");
  }

  function render(v) {
    view = v;
    $("chat").hidden = false;
    say("");
    renderSide(v);
    renderTurns(v);
    const open = v.state === "open";
    $("turn-state").textContent = open ? (v.your_turn ? S.your_turn : S.their_turn) : "";
    $("turn-state").className = "notice" + (v.your_turn ? " yours" : "");
    $("text").disabled = $("send").disabled = !(open && v.your_turn);
    $("count").textContent = S.turns.replace("{n}", v.turns.length).replace("{min}", v.min_turns).replace("{max}", v.max_turns);
    $("finish").hidden = !v.can_finish;
    $("done").hidden = open;
    if (!open && v.checks) {
      fill($("checks"), [
        S.goal_reached + ": " + (v.checks.goal_reached ? "✓" : "✗"),
        S.checks + ": " + (v.checks.passed ? S.passed : S.failed),
      ], (text) => item(text));
    }
  }

  async function follow() {
    while (sid) {
      try {
        const since = view && view.session === sid ? view.turns.length : -1;
        const v = await api("GET", "/api/collect/session/" + sid + "?wait=20&since=" + since);
        render(v);
        if (v.state !== "open") return;
      } catch (error) {
        if (error.status === 403) { sid = null; view = null; return join(); }
        say(S.error + error.message);
        await new Promise((r) => setTimeout(r, 3000));
      }
    }
  }

  async function join() {
    try {
      const r = await api("POST", "/api/collect/join");
      if (r.partner) {
        sid = r.session;
        return follow();
      }
      say(r.done ? S.done : S.waiting);
      if (!r.done) setTimeout(join, 2000);
    } catch (error) {
      say(S.error + error.message);
      setTimeout(join, 5000);
    }
  }

  $("say").addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = $("text").value.trim();
    if (!text || !view) return;
    const body = { text, facts: [...clicked] };
    if (view.step !== undefined && !$("step-box").hidden) body.step = Number($("step").value);
    $("send").disabled = true;
    try {
      const accepted = await api("POST", "/api/collect/session/" + sid + "/turn", body);
      $("text").value = "";
      clicked.clear();
      document.querySelectorAll("button.fact").forEach((b) => b.setAttribute("aria-pressed", "false"));
      fill($("warnings"), accepted.warnings || [], (code) => item(warningText(code, view)));
    } catch (error) {
      fill($("warnings"), [S.error + error.message], (text) => item(text));
      $("send").disabled = false;
    }
  });

  $("finish").addEventListener("click", async () => {
    try {
      await api("POST", "/api/collect/session/" + sid + "/finish");
    } catch (error) {
      fill($("warnings"), [S.error + error.message], (text) => item(text));
    }
  });

  $("again").addEventListener("click", () => {
    sid = null;
    view = null;
    shownKnowledge = null;
    $("chat").hidden = true;
    fill($("warnings"), [], item);
    join();
  });

  document.querySelectorAll("button.fact").forEach((b) => b.addEventListener("click", () => toggle(b)));
  if (view) shownKnowledge = view.session;
  if (!token) say(S.no_token);
  else if (sid && view.state === "open") { render(view); follow(); }
  else join();
})();
