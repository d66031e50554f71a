// The neighbourhood view: the entity and its neighbours; a click on a node adds that node's neighbours.
// Labels go into the graph as data (drawn on a canvas) and into the side panel as textContent only.
(function () {
  "use strict";
  const box = document.getElementById("graph");
  const status = document.getElementById("graph-status");
  const expanded = new Set();
  const cy = cytoscape({
    container: box,
    style: [
      { selector: "node", style: { "label": "data(label)", "font-size": 11, "background-color": "#5b8def",
                                   "width": 18, "height": 18, "text-valign": "bottom", "text-margin-y": 3 } },
      { selector: "node.center", style: { "background-color": "#e4572e", "width": 26, "height": 26 } },
      { selector: "node.expanded", style: { "border-width": 2, "border-color": "#333" } },
      { selector: "edge", style: { "label": "data(label)", "font-size": 9, "curve-style": "bezier", "color": "#555",
                                   "text-background-color": "#fff", "text-background-opacity": 0.85,
                                   "target-arrow-shape": "triangle", "width": 1.2, "line-color": "#999",
                                   "target-arrow-color": "#999", "text-rotation": "autorotate" } },
      { selector: "edge.derived", style: { "line-style": "dashed", "line-color": "#c9a227" } },
    ],
  });

  async function expand(iri) {
    if (expanded.has(iri)) return;
    expanded.add(iri);
    status.textContent = "loading…";
    const reply = await fetch("/api/neighbours?iri=" + encodeURIComponent(iri));
    if (!reply.ok) { status.textContent = await reply.text(); return; }
    const data = await reply.json();
    const added = [];
    if (cy.getElementById(data.center.id).empty()) {
      added.push({ group: "nodes", data: { id: data.center.id, label: data.center.label }, classes: "center" });
    }
    for (const node of data.nodes) {
      if (cy.getElementById(node.id).empty()) added.push({ group: "nodes", data: node });
    }
    for (const edge of data.edges) {
      const id = edge.source + "\u0000" + edge.label + "\u0000" + edge.target;
      if (cy.getElementById(id).empty()) {
        added.push({ group: "edges", data: { id: id, source: edge.source, target: edge.target, label: edge.label },
                     classes: edge.derived ? "derived" : "" });
      }
    }
    cy.add(added);
    cy.getElementById(iri).addClass("expanded");
    cy.layout({ name: "cose", animate: false, randomize: false, nodeRepulsion: 8000 }).run();
    status.textContent = cy.nodes().length + " nodes, " + cy.edges().length + " edges" +
      (data.truncated ? " (some neighbours left out)" : "");
    box.dataset.nodes = String(cy.nodes().length);
  }

  function select(node) {
    document.getElementById("selected-label").textContent = node.data("label");
    document.getElementById("selected-link").href = "/entity?iri=" + encodeURIComponent(node.id());
  }

  cy.on("tap", "node", function (event) { select(event.target); expand(event.target.id()); });
  cy.on("dbltap", "node", function (event) { window.location.href = "/entity?iri=" + encodeURIComponent(event.target.id()); });
  window.kgforgeGraph = { cy: cy, expand: expand };
  expand(box.dataset.iri).then(function () { const c = cy.getElementById(box.dataset.iri); if (!c.empty()) select(c); });
})();
