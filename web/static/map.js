// The Map page: draw the server's elements (preset positions) with cytoscape; a tap on a
// node opens its detail page. A big map (more than BIG nodes) paints its nodes and layers
// first and adds the edges right after that first frame, and shows node labels once zoomed
// in far enough to read them (measuring 2,000 labels costs more than drawing the nodes).
// window.mapReady / edgesReady record those two moments for tests and the benchmark.
(function () {
  "use strict";
  const BIG = 600, LABEL_ZOOM = 0.6;
  const elements = JSON.parse(document.getElementById("graph-data").textContent);
  const edges = elements.filter((e) => "source" in e.data);
  const nodes = elements.filter((e) => !("source" in e.data));
  const big = nodes.length > BIG;
  if (big) {  // layers as boxes behind their nodes instead of compound parents (see graph_view)
    for (const n of nodes) {
      delete n.data.parent;
      if (n.data.kind === "layer") n.classes = "layer band";
    }
  }
  const colours = { component: "#2856c9", interface: "#c2410c", scenario: "#15803d",
                    symbol: "#64748b", file: "#94a3b8", doc: "#a16207", test: "#7c3aed" };
  const style = [
    { selector: "node", style: { "label": big ? "" : "data(label)", "font-size": 13, "width": 16, "height": 16,
      "background-color": "#475569", "color": "#1d2330", "text-valign": "bottom",
      "text-margin-y": 2, "min-zoomed-font-size": 5 } },
  ];
  for (const [kind, colour] of Object.entries(colours)) {  // plain selectors: no per-node calls
    style.push({ selector: "node." + kind, style: { "background-color": colour } });
  }
  style.push(
    { selector: "node.interface", style: { "shape": "diamond" } },
    { selector: "node.scenario", style: { "shape": "round-rectangle", "width": 22 } },
    { selector: ":parent", style: { "background-color": "#eef2fa", "background-opacity": 0.7,
      "border-color": "#9aa8c7", "border-width": 1, "label": "data(label)", "font-size": 26,
      "font-weight": "bold", "text-valign": "top", "text-halign": "left", "padding": 18,
      "color": "#15213b", "min-zoomed-font-size": 0 } },
    { selector: "node.band", style: { "shape": "rectangle", "width": "data(w)",
      "height": "data(h)", "background-color": "#eef2fa", "background-opacity": 0.7,
      "border-color": "#9aa8c7", "border-width": 1, "label": "data(label)", "font-size": 26,
      "font-weight": "bold", "text-valign": "top", "text-halign": "center", "z-index": 0,
      "color": "#15213b", "min-zoomed-font-size": 0 } },
    { selector: "node[kind != 'layer']", style: { "z-index": 10 } },
    { selector: "edge", style: { "width": 0.7, "line-color": "#b8c2d6", "curve-style": "haystack",
      "opacity": 0.55 } },
    { selector: "edge.provides, edge.consumes, edge.implements",
      style: { "line-color": "#c2410c", "opacity": 0.7 } },
    { selector: "node:selected", style: { "border-width": 3, "border-color": "#f59e0b" } },
  );
  const cy = cytoscape({
    container: document.getElementById("cy"), elements: big ? nodes : elements, style: style,
    layout: { name: "preset", fit: true, padding: 20 },
    hideEdgesOnViewport: elements.length > 3000, textureOnViewport: elements.length > 3000,
  });
  window.cy = cy;
  function edgesDrawn() {
    window.edgesReady = performance.now();
    document.body.dataset.edgesReady = "1";
  }
  cy.one("render", function () {
    window.mapReady = performance.now();
    document.body.dataset.mapReady = "1";
    if (!big) { edgesDrawn(); return; }
    setTimeout(function () { cy.add(edges); cy.one("render", edgesDrawn); }, 0);
  });
  if (big) {
    let labelled = false;
    cy.on("zoom", function () {
      const want = cy.zoom() >= LABEL_ZOOM;
      if (want === labelled) return;
      labelled = want;
      cy.style().selector("node[kind != 'layer']").style("label", want ? "data(label)" : "")
        .update();
    });
  }
  cy.on("tap", "node", function (evt) {
    const id = evt.target.id();
    if (id.startsWith("band:")) return;
    window.location.href = "/nodes/" + encodeURIComponent(id).replace(/%3A/g, ":").replace(/%2F/g, "/");
  });
})();
