// The SPARQL editor: CodeMirror over the query, the shipped queries/ files one choice away, bindings sent
// as $name=TERM substitutions, results drawn as a table with textContent (never as HTML).
(function () {
  "use strict";
  const queries = JSON.parse(document.getElementById("shipped-queries").textContent);
  const select = document.getElementById("shipped");
  const editor = CodeMirror.fromTextArea(document.getElementById("query"), { mode: "sparql", lineNumbers: true });
  const status = document.getElementById("run-status");
  const results = document.getElementById("results");

  function load(name) { if (queries[name]) editor.setValue(queries[name]); }
  select.addEventListener("change", function () { load(select.value); });
  if (select.value) load(select.value);

  function cell(row, tag, text) { const td = document.createElement(tag); td.textContent = text; row.appendChild(td); }

  function show(data) {
    results.replaceChildren();
    if (typeof data.boolean === "boolean") { cell(results, "p", String(data.boolean)); return; }
    const table = document.createElement("table");
    table.className = "facts";
    table.id = "result-table";
    const head = document.createElement("tr");
    for (const v of data.head.vars) cell(head, "th", v);
    table.appendChild(head);
    for (const binding of data.results.bindings) {
      const row = document.createElement("tr");
      for (const v of data.head.vars) {
        const term = binding[v];
        cell(row, "td", term ? term.value + (term["xml:lang"] ? " @" + term["xml:lang"] : "") : "");
      }
      table.appendChild(row);
    }
    results.appendChild(table);
  }

  async function run() {
    const body = new URLSearchParams({ query: editor.getValue() });
    for (const line of document.getElementById("bindings").value.split("\n")) {
      const at = line.indexOf("=");
      if (at > 0) body.append("$" + line.slice(0, at).trim().replace(/^[?$]/, ""), line.slice(at + 1).trim());
    }
    status.textContent = "running…";
    const started = performance.now();
    const reply = await fetch("/sparql", { method: "POST", body: body,
      headers: { "Accept": "application/sparql-results+json, text/turtle;q=0.9" } });
    const took = Math.round(performance.now() - started) + " ms";
    if (!reply.ok) { status.textContent = reply.status + ": " + (await reply.text()); results.replaceChildren(); return; }
    if ((reply.headers.get("content-type") || "").includes("json")) {
      const data = await reply.json();
      show(data);
      status.textContent = (data.results ? data.results.bindings.length + " rows, " : "") + took;
    } else {
      results.replaceChildren();
      const pre = document.createElement("pre");
      pre.textContent = await reply.text();
      results.appendChild(pre);
      status.textContent = took;
    }
  }
  document.getElementById("run").addEventListener("click", run);
  window.kgforgeEditor = editor;
})();
